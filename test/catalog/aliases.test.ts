/**
 * Public aliases: which names are derived, how names resolve, and that a name leading to two models
 * is refused when the config is loaded, with the path of the field that introduced it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dump } from 'js-yaml';
import { publicAliases, versionVariant } from '../../src/config/aliases.ts';
import { buildCatalog } from '../../src/catalog/catalog.ts';
import { ConfigError, parseConfig } from '../../src/config/load.ts';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { config, endpoint, model } from './builders.ts';

describe('version spelling variants', () => {
  const cases: [string, string | undefined][] = [
    ['atlas-4-5', 'atlas-4.5'],
    ['atlas-4.5', 'atlas-4-5'],
    ['atlas-4-5-mini', 'atlas-4.5-mini'],
    ['orbit-3-1-8b', 'orbit-3.1-8b'],
    ['sonnet-3-5-20241022', 'sonnet-3.5-20241022'],
    ['gateway/atlas-4-5', 'gateway/atlas-4.5'],
    ['model-2-7b', undefined], // 7b is a size, not a minor version
    ['snapshot-2024-08-06', undefined], // dates are never rewritten
    ['x-1-2-3', undefined], // three numbers: no reliable reading
    ['tool-1.2.3', undefined],
    ['plain', undefined],
    ['reel-3', undefined],
  ];
  for (const [name, expected] of cases) {
    test(`${name} → ${expected ?? 'none'}`, () => assert.equal(versionVariant(name), expected));
  }
});

describe('public aliases', () => {
  test('configured aliases first, then the last segment and the version variants, never the id', () => {
    assert.deepEqual(publicAliases({ id: 'gateway/atlas-4-5', aliases: ['atlas', 'gateway/atlas-4-5', 'atlas'] }), [
      'atlas',
      'atlas-4-5',
      'gateway/atlas-4.5',
      'atlas-4.5',
    ]);
    assert.deepEqual(publicAliases({ id: 'gateway/vendor/reel-3' }), ['reel-3']);
  });

  test('every public name resolves to the id; aliases are not rows', () => {
    const catalog = buildCatalog(
      config([model('gateway/atlas-4-5', [endpoint()], { aliases: ['vendor/atlas-four-five'] }), model('gateway/reel-3', [endpoint()])]),
    );
    for (const name of ['gateway/atlas-4-5', 'atlas-4-5', 'atlas-4.5', 'gateway/atlas-4.5', 'vendor/atlas-four-five']) {
      assert.equal(catalog.resolve(name), 'gateway/atlas-4-5', name);
    }
    assert.equal(catalog.resolve('reel-3'), 'gateway/reel-3');
    assert.equal(catalog.resolve('atlas'), undefined);
    assert.equal(catalog.resolve('Atlas-4-5'), undefined, 'names are case-sensitive');
    assert.deepEqual(
      catalog.listModels({ communitySupply: true, trainingUse: true }, null).map((row) => row.id),
      ['gateway/atlas-4-5', 'gateway/reel-3'],
    );
    assert.equal(catalog.getModel('atlas-4.5', { communitySupply: false, trainingUse: false }, null)?.id, 'gateway/atlas-4-5');
  });
});

describe('ambiguous names are refused at load', () => {
  const cases: { name: string; models: GatewayConfig['models']; path: string; message: RegExp }[] = [
    {
      name: "an alias equal to another model's id",
      models: [model('gateway/a', [endpoint()]), model('gateway/b', [endpoint()], { aliases: ['x', 'gateway/a'] })],
      path: '/models/1/aliases/1',
      message: /alias 'gateway\/a' of 'gateway\/b' is the id of model 'gateway\/a'/,
    },
    {
      name: 'one alias configured on two models',
      models: [model('gateway/a', [endpoint()], { aliases: ['shared'] }), model('gateway/b', [endpoint()], { aliases: ['shared'] })],
      path: '/models/1/aliases/0',
      message: /alias 'shared' of 'gateway\/b' also names model 'gateway\/a'/,
    },
    {
      name: 'two ids with the same last segment',
      models: [model('gateway/one/foo-1', [endpoint()]), model('gateway/two/foo-1', [endpoint()])],
      path: '/models/1/id',
      message: /derived alias 'foo-1'/,
    },
    {
      name: "a configured alias equal to another model's derived alias",
      models: [model('gateway/atlas-4-5', [endpoint()]), model('gateway/b', [endpoint()], { aliases: ['atlas-4.5'] })],
      path: '/models/1/aliases/0',
      message: /'atlas-4.5' of 'gateway\/b' also names model 'gateway\/atlas-4-5'/,
    },
  ];
  for (const { name, models, path, message } of cases) {
    test(name, () => {
      const document = config(models);
      assert.throws(
        () => parseConfig(dump(document)),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.equal(error.path, path);
          assert.match(error.message, message);
          return true;
        },
      );
      assert.throws(() => buildCatalog(document), ConfigError, 'a config built in code is checked too');
    });
  }
});
