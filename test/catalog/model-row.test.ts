/**
 * Every field of the public Model row: the complete row of a minimal and of a fully described
 * model, the null/omission rules, supported endpoints, promotions and the search price.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCatalog } from '../../src/catalog/catalog.ts';
import { DEFAULT_REGISTERED_AT } from '../../src/catalog/model-row.ts';
import type { GatewayConfig, ModelConfig } from '../../src/config/schema.ts';
import { CONSENT, config, endpoint, model, rowOf, type EndpointInput } from './builders.ts';

function onlyRow(modelConfig: ModelConfig, fields: Partial<GatewayConfig> = {}) {
  return rowOf(buildCatalog(config([modelConfig], fields)), modelConfig.id);
}

describe('model row', () => {
  test('a minimal model: nulls where the config says nothing', () => {
    const row = onlyRow(model('gateway/tiny-1', [endpoint({ pricing: { input_per_1m: 1, output_per_1m: 2 } })]));
    assert.deepEqual(row, {
      id: 'gateway/tiny-1',
      aliases: ['tiny-1'],
      object: 'model',
      owned_by: 'tests',
      created: Date.UTC(2025, 0, 1) / 1000,
      released_at: null,
      registered_at: DEFAULT_REGISTERED_AT,
      updated_at: null,
      name: 'tiny-1',
      description: null,
      series: null,
      input_modalities: ['text'],
      output_modalities: ['text'],
      knowledge_cutoff: null,
      price_search_per_query: null,
      supply: 'first_party',
      training_use: 'never',
      category: 'LLM',
      type: 'chat',
      supported_endpoints: ['chat/completions', 'messages', 'responses'],
      parameter_constraints: [{ provider: 'p1', parameters: {} }],
      capabilities: {},
      limits: {},
      pricing: { unit: 'per_1m_tokens', input_per_1m: 1, output_per_1m: 2 },
      available: true,
      discount_percent: null,
    });
    assert.equal(DEFAULT_REGISTERED_AT, '2025-01-01');
  });

  test('a fully described model carries every configured value', () => {
    const row = onlyRow(
      model(
        'gateway/atlas-2',
        [
          endpoint({
            pricing: { input_per_1m: 3, output_per_1m: 15 },
            capabilities: { web_search: true, streaming: true },
            search_price_per_query: 0.01,
          }),
        ],
        {
          name: 'Atlas 2',
          aliases: ['atlas-two'],
          owned_by: 'atlas-labs',
          released_at: '2025-03-01',
          registered_at: '2025-03-05',
          updated_at: '2025-06-01T12:00:00Z',
          description: 'A model.',
          series: 'atlas',
          input_modalities: ['text', 'image'],
          knowledge_cutoff: '2024-12-31',
          discount_percent: 25,
          supported_endpoints: ['chat/completions'],
        },
      ),
    );
    assert.deepEqual(
      {
        aliases: row.aliases,
        created: row.created,
        released_at: row.released_at,
        registered_at: row.registered_at,
        updated_at: row.updated_at,
        description: row.description,
        series: row.series,
        knowledge_cutoff: row.knowledge_cutoff,
        price_search_per_query: row.price_search_per_query,
        supported_endpoints: row.supported_endpoints,
        capabilities: row.capabilities,
        discount_percent: row.discount_percent,
      },
      {
        aliases: ['atlas-two', 'atlas-2'],
        created: Date.UTC(2025, 2, 5) / 1000,
        released_at: '2025-03-01',
        registered_at: '2025-03-05',
        updated_at: '2025-06-01T12:00:00Z',
        description: 'A model.',
        series: 'atlas',
        knowledge_cutoff: '2024-12-31',
        price_search_per_query: 0.01,
        supported_endpoints: ['chat/completions'],
        capabilities: { streaming: true, web_search: true, vision: true },
        discount_percent: 25,
      },
    );
  });

  test('without registered_at the release date stands in for registration and created', () => {
    const row = onlyRow(model('gateway/m', [endpoint()], { released_at: '2024-07-23' }));
    assert.equal(row.registered_at, '2024-07-23');
    assert.equal(row.created, Date.UTC(2024, 6, 23) / 1000);
  });
});

describe('supported endpoints', () => {
  const cases: {
    name: string;
    fields: Partial<ModelConfig>;
    capabilities?: Record<string, boolean>;
    pricing?: EndpointInput['pricing'];
    expected: string[];
  }[] = [
    { name: 'LLM', fields: {}, expected: ['chat/completions', 'messages', 'responses'] },
    { name: 'IMAGE without editing', fields: { category: 'IMAGE' }, capabilities: { image_generation: true }, expected: ['images/generations'] },
    {
      name: 'IMAGE with editing on every route',
      fields: { category: 'IMAGE' },
      capabilities: { image_generation: true, image_editing: true },
      expected: ['images/generations', 'images/edits'],
    },
    { name: 'VIDEO', fields: { category: 'VIDEO' }, pricing: { unit: 'per_second', per_second: 0.1 }, expected: ['videos/generations'] },
    { name: 'configured list wins', fields: { supported_endpoints: ['responses'] }, expected: ['responses'] },
  ];
  for (const { name, fields, capabilities, pricing, expected } of cases) {
    test(name, () => {
      const row = onlyRow(model('gateway/m', [endpoint({ capabilities, pricing })], fields));
      assert.deepEqual(row.supported_endpoints, expected);
    });
  }
});

describe('top-level discount_percent (promotion)', () => {
  const cases: { name: string; modelPercent?: number | null; globalPercent?: number; expected: number | null }[] = [
    { name: 'none configured → null', expected: null },
    { name: 'global promotion applies to every model', globalPercent: 5, expected: 5 },
    { name: 'a model-specific promotion takes precedence', modelPercent: 20, globalPercent: 5, expected: 20 },
    { name: 'a model-specific 0 opts the model out of the global promotion', modelPercent: 0, globalPercent: 5, expected: null },
    { name: 'an explicit null on the model falls back to the global one', modelPercent: null, globalPercent: 5, expected: 5 },
  ];
  for (const { name, modelPercent, globalPercent, expected } of cases) {
    test(name, () => {
      const fields = modelPercent === undefined ? {} : { discount_percent: modelPercent };
      const row = onlyRow(model('gateway/m', [endpoint()], fields), globalPercent === undefined ? {} : { promotions: { discount_percent: globalPercent } });
      assert.equal(row.discount_percent, expected);
    });
  }
});

describe('price_search_per_query', () => {
  const search = (price: number | undefined, more = {}) =>
    endpoint({ capabilities: { web_search: true }, ...(price === undefined ? {} : { search_price_per_query: price }), ...more });
  const cases: { name: string; endpoints: ReturnType<typeof endpoint>[]; expected: number | null }[] = [
    { name: 'lowest search price among the routes', endpoints: [search(0.012), search(0.01)], expected: 0.01 },
    { name: 'a pinned route does not set it', endpoints: [search(0.012), search(0.005, { pinned: true })], expected: 0.012 },
    { name: 'null when web search is not guaranteed on every route', endpoints: [search(0.01), endpoint()], expected: null },
    { name: 'null when no route states a reference cost', endpoints: [search(undefined)], expected: null },
  ];
  for (const { name, endpoints, expected } of cases) {
    test(name, () => assert.equal(onlyRow(model('gateway/m', endpoints)).price_search_per_query, expected));
  }
});

describe('routes', () => {
  test('route endpoints carry exact prices in pico-USD and the endpoint profile', () => {
    const catalog = buildCatalog(
      config([
        model('gateway/m', [
          endpoint({
            provider: 'p2',
            model: 'up-m',
            latency_ms: 300,
            throughput_tps: 80,
            search_price_per_query: 0.01,
            pricing: {
              input_per_1m: 0.15,
              output_per_1m: 0.6,
              cache_read_per_1m: 0.075,
              cache_write_1h_per_1m: 0.3,
              long_context: { threshold_tokens: 1000, input_per_1m: 0.3, output_per_1m: 1.2, cache_write_1h_per_1m: 0.6 },
              variants: [{ key: '720p', price: 0.3 }],
            },
          }),
        ]),
      ]),
    );
    const [route] = catalog.routes('gateway/m', CONSENT.none);
    assert.equal(route.key, 'p2:up-m');
    assert.equal(route.modelId, 'gateway/m');
    assert.equal(route.provider.id, 'p2');
    assert.equal(route.upstreamModel, 'up-m');
    assert.equal(route.latencyMs, 300);
    assert.equal(route.throughputTps, 80);
    assert.deepEqual(route.prices.standard, { input: 150_000n, output: 600_000n, cacheRead: 75_000n, cacheWrite: undefined, cacheWrite1h: 300_000n });
    assert.deepEqual(route.prices.longContext, {
      thresholdTokens: 1000,
      input: 300_000n,
      output: 1_200_000n,
      cacheRead: undefined,
      cacheWrite: undefined,
      cacheWrite1h: 600_000n,
    });
    assert.deepEqual([...route.prices.variants], [['720p', 300_000_000_000n]]);
    assert.equal(route.prices.searchPerUnit, 10_000_000_000n);
    assert.equal(route.prices.searchBilling, 'per_query');
  });
});
