/**
 * The four consent views: which models each one lists, which endpoints it may route to, and how a
 * mixed model's prices and capabilities follow only the allowed endpoints while its supply and
 * training use describe the whole model.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCatalog } from '../../src/catalog/catalog.ts';
import type { ModelRow } from '../../src/catalog/schemas.ts';
import { CONSENT, config, endpoint, model } from './builders.ts';

const tokens = (input: number, output: number) => ({ unit: 'per_1m_tokens' as const, input_per_1m: input, output_per_1m: output });

const catalog = buildCatalog(
  config([
    model('gateway/first', [endpoint({ model: 'first-a', pricing: tokens(1, 2) })]),
    model('gateway/community-only', [endpoint({ provider: 'p2', model: 'community-a', supply: 'community', pricing: tokens(1, 2) })]),
    model('gateway/training-only', [endpoint({ provider: 'p3', model: 'training-a', training_use: 'opt_in', pricing: tokens(1, 2) })]),
    model('gateway/mixed', [
      endpoint({ model: 'mixed-first', pricing: tokens(2, 8), capabilities: { tool_use: true, streaming: true } }),
      endpoint({ provider: 'p2', model: 'mixed-community', supply: 'community', pricing: tokens(1, 4), capabilities: { tool_use: false, streaming: true } }),
      endpoint({ provider: 'p3', model: 'mixed-training', training_use: 'opt_in', pricing: tokens(0.5, 2), capabilities: { streaming: true } }),
      endpoint({
        provider: 'p2',
        model: 'mixed-both',
        supply: 'community',
        training_use: 'opt_in',
        pricing: tokens(0.25, 1),
        capabilities: { tool_use: true, streaming: true },
      }),
    ]),
    model('gateway/announced', [endpoint({ model: 'announced-a', enabled: false, pricing: tokens(1, 2) })]),
  ]),
);

const views = [
  {
    name: 'no consent',
    consent: CONSENT.none,
    listed: ['gateway/first', 'gateway/mixed', 'gateway/announced'],
    mixedRoutes: ['p1:mixed-first'],
    mixed: { pricing: { unit: 'per_1m_tokens', input_per_1m: 2, output_per_1m: 8 }, tool_use: true },
  },
  {
    name: 'community supply only',
    consent: CONSENT.community,
    listed: ['gateway/first', 'gateway/community-only', 'gateway/mixed', 'gateway/announced'],
    mixedRoutes: ['p1:mixed-first', 'p2:mixed-community'],
    mixed: {
      pricing: { unit: 'per_1m_tokens', conditions: ['community_supply'], input_per_1m: 1, output_per_1m: 4 },
      tool_use: false,
    },
  },
  {
    name: 'training use only',
    consent: CONSENT.training,
    listed: ['gateway/first', 'gateway/training-only', 'gateway/mixed', 'gateway/announced'],
    mixedRoutes: ['p1:mixed-first', 'p3:mixed-training'],
    mixed: {
      pricing: { unit: 'per_1m_tokens', conditions: ['training_use'], input_per_1m: 0.5, output_per_1m: 2 },
      tool_use: undefined,
    },
  },
  {
    name: 'both consents',
    consent: CONSENT.all,
    listed: ['gateway/first', 'gateway/community-only', 'gateway/training-only', 'gateway/mixed', 'gateway/announced'],
    mixedRoutes: ['p1:mixed-first', 'p2:mixed-community', 'p3:mixed-training', 'p2:mixed-both'],
    mixed: {
      pricing: { unit: 'per_1m_tokens', conditions: ['community_supply', 'training_use'], input_per_1m: 0.25, output_per_1m: 1 },
      tool_use: false,
    },
  },
] as const;

describe('consent views', () => {
  for (const view of views) {
    test(`${view.name}: lists ${view.listed.length} models`, () => {
      assert.deepEqual(
        catalog.listModels(view.consent, null).map((row) => row.id),
        view.listed,
      );
    });

    test(`${view.name}: a mixed model prices and routes only through the allowed endpoints`, () => {
      assert.deepEqual(
        catalog.routes('gateway/mixed', view.consent).map((route) => route.key),
        view.mixedRoutes,
      );
      const row = catalog.getModel('gateway/mixed', view.consent, null) as ModelRow;
      assert.deepEqual(row.pricing, view.mixed.pricing);
      assert.equal(row.capabilities.tool_use, view.mixed.tool_use);
      assert.equal(row.capabilities.streaming, true);
      assert.equal(row.available, true);
    });
  }

  // Hand-computed from the config above: gateway/mixed has first-party and community endpoints
  // (supply mixed) and never-training and training-tier endpoints (training_use mixed).
  test('supply and training_use are model-wide: every view of a model shows the same pair', () => {
    const expected: Record<string, [ModelRow['supply'], ModelRow['training_use']]> = {
      'gateway/first': ['first_party', 'never'],
      'gateway/community-only': ['community', 'never'],
      'gateway/training-only': ['first_party', 'opt_in'],
      'gateway/mixed': ['mixed', 'mixed'],
      'gateway/announced': ['none', 'none'],
    };
    for (const view of views) {
      for (const row of catalog.listModels(view.consent, null) as readonly ModelRow[]) {
        assert.deepEqual([row.supply, row.training_use], expected[row.id], `${row.id} for ${view.name}`);
      }
    }
  });

  test('an owner without consent sees a first-party + community model as mixed, with unconditional rates', () => {
    const twoKinds = buildCatalog(
      config([
        model('gateway/two-kinds', [
          endpoint({ model: 'first', pricing: tokens(2, 8) }),
          endpoint({ provider: 'p2', model: 'community', supply: 'community', pricing: tokens(1, 4) }),
          endpoint({ provider: 'p3', model: 'training', training_use: 'opt_in', enabled: false, pricing: tokens(0.5, 2) }),
        ]),
      ]),
    );
    const row = twoKinds.getModel('gateway/two-kinds', CONSENT.none, null) as ModelRow;
    assert.equal(row.supply, 'mixed');
    // The training tier is disabled, so it counts for nothing, not even for training_use.
    assert.equal(row.training_use, 'never');
    // Conditions come from where the shown rates come from, not from the model-wide supply.
    assert.deepEqual(row.pricing, { unit: 'per_1m_tokens', input_per_1m: 2, output_per_1m: 8 });
    assert.deepEqual(
      twoKinds.routes('gateway/two-kinds', CONSENT.none).map((route) => route.key),
      ['p1:first'],
    );
  });

  test('community-only and training-only models are hidden and unroutable without consent', () => {
    assert.equal(catalog.getModel('gateway/community-only', CONSENT.none, null), undefined);
    assert.equal(catalog.getModel('gateway/community-only', CONSENT.training, null), undefined);
    assert.deepEqual(catalog.routes('gateway/community-only', CONSENT.none), []);
    assert.equal(catalog.getModel('gateway/training-only', CONSENT.community, null), undefined);
    assert.deepEqual(catalog.routes('gateway/training-only', CONSENT.community), []);
    const visible = catalog.getModel('gateway/community-only', CONSENT.community, null) as ModelRow;
    assert.equal(visible.supply, 'community');
    assert.deepEqual(visible.pricing.conditions, ['community_supply']);
  });

  test('a model whose endpoints are all disabled stays listed as unavailable with supply none', () => {
    const row = catalog.getModel('gateway/announced', CONSENT.none, null) as ModelRow;
    assert.equal(row.available, false);
    assert.equal(row.supply, 'none');
    assert.equal(row.training_use, 'none');
    assert.deepEqual(row.pricing, { unit: 'per_1m_tokens' });
    assert.deepEqual(row.capabilities, {});
    assert.deepEqual(row.limits, {});
    assert.deepEqual(row.parameter_constraints, []);
    assert.deepEqual(catalog.routes('gateway/announced', CONSENT.all), []);
  });

  test('the allowed-model list filters the list and hides a model from retrieval', () => {
    const allowed = new Set(['gateway/mixed', 'gateway/community-only']);
    assert.deepEqual(
      catalog.listModels(CONSENT.none, allowed).map((row) => row.id),
      ['gateway/mixed'],
    );
    assert.equal(catalog.getModel('gateway/first', CONSENT.all, allowed), undefined);
    assert.equal(catalog.getModel('gateway/mixed', CONSENT.all, allowed)?.id, 'gateway/mixed');
  });

  test('rows are derived once per view: the same objects are served every time', () => {
    assert.equal(catalog.listModels(CONSENT.all, null), catalog.listModels(CONSENT.all, null));
    assert.equal(catalog.getModel('mixed', CONSENT.all, null), catalog.listModels(CONSENT.all, null)[3]);
    assert.ok(Object.isFrozen(catalog.listModels(CONSENT.none, null)));
  });

  test('category and routes of an unknown model', () => {
    assert.equal(catalog.category('gateway/mixed'), 'LLM');
    assert.equal(catalog.category('gateway/unknown'), undefined);
    assert.deepEqual(catalog.routes('gateway/unknown', CONSENT.all), []);
  });
});
