/** The loader rules the catalog relies on, each refused with the path of the bad field. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { ConfigError, parseConfig } from '../../src/config/load.ts';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { config, endpoint, model } from './builders.ts';

const cases: { name: string; document: GatewayConfig; path: string }[] = [
  {
    name: 'endpoints of one model with different pricing units',
    document: config([model('gateway/m', [endpoint(), endpoint({ pricing: { unit: 'per_image', per_image: 0.1 } })])]),
    path: '/models/0/endpoints/1/pricing/unit',
  },
  {
    name: 'the same provider and upstream model twice in one model',
    document: config([model('gateway/m', [endpoint({ model: 'same' }), endpoint({ model: 'same' })])]),
    path: '/models/0/endpoints/1/model',
  },
  {
    name: 'a variant key listed twice on one endpoint',
    document: config([
      model('gateway/v', [
        endpoint({ pricing: { unit: 'per_second', variants: [{ key: '720p', price: 0.1 }, { key: '720p', price: 0.2 }] } }),
      ]),
    ]),
    path: '/models/0/endpoints/0/pricing/variants/1/key',
  },
];

for (const { name, document, path } of cases) {
  test(`refused: ${name}`, () => {
    assert.throws(() => parseConfig(stringify(document)), (error: unknown) => error instanceof ConfigError && error.path === path);
  });
}

test('the same upstream model on two models is fine', () => {
  const document = config([model('gateway/a', [endpoint({ model: 'shared' })]), model('gateway/b', [endpoint({ model: 'shared' })])]);
  assert.doesNotThrow(() => parseConfig(stringify(document)));
});
