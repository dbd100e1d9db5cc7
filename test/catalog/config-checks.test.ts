/** The config rules the catalog relies on, each refused with the path of the bad field. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dump } from 'js-yaml';
import { buildCatalog } from '../../src/catalog/catalog.ts';
import { ConfigError, parseConfig } from '../../src/config/load.ts';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { config, endpoint, model, rowOf } from './builders.ts';

const refusedWith = (path: string) => (error: unknown) => error instanceof ConfigError && error.path === path;

/** A variant as an old config wrote it, with the list price the public shape never had. */
const variantWithListPrice = { key: '720p', price: 0.1, list_price: 0.2 } as unknown as { key: string; price: number };

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
        endpoint({
          pricing: {
            unit: 'per_second',
            variants: [
              { key: '720p', price: 0.1 },
              { key: '720p', price: 0.2 },
            ],
          },
        }),
      ]),
    ]),
    path: '/models/0/endpoints/0/pricing/variants/1/key',
  },
  {
    name: 'a variant list_price (read nowhere, so not a config field)',
    document: config([model('gateway/v', [endpoint({ pricing: { unit: 'per_second', variants: [variantWithListPrice] } })])]),
    path: '/models/0/endpoints/0/pricing/variants/0/list_price',
  },
  {
    name: 'a 1-hour cache-write rate finer than a per-million-token rate can be (6 decimals)',
    document: config([model('gateway/m', [endpoint({ pricing: { unit: 'per_1m_tokens', cache_write_1h_per_1m: 0.0000001 } })])]),
    path: '/models/0/endpoints/0/pricing/cache_write_1h_per_1m',
  },
  {
    name: 'the same in a long-context tier',
    document: config([
      model('gateway/m', [
        endpoint({
          pricing: { unit: 'per_1m_tokens', long_context: { threshold_tokens: 10, input_per_1m: 1, output_per_1m: 1, cache_write_1h_per_1m: 0.0000001 } },
        }),
      ]),
    ]),
    path: '/models/0/endpoints/0/pricing/long_context/cache_write_1h_per_1m',
  },
  {
    name: 'the same as a list price',
    document: config([model('gateway/m', [endpoint({ pricing: { unit: 'per_1m_tokens', list: { cache_write_1h_per_1m: 0.0000001 } } })])]),
    path: '/models/0/endpoints/0/pricing/list/cache_write_1h_per_1m',
  },
];

for (const { name, document, path } of cases) {
  test(`refused: ${name}`, () => {
    assert.throws(() => parseConfig(dump(document)), refusedWith(path));
  });
}

test('the same upstream model on two models is fine', () => {
  const document = config([model('gateway/a', [endpoint({ model: 'shared' })]), model('gateway/b', [endpoint({ model: 'shared' })])]);
  assert.doesNotThrow(() => parseConfig(dump(document)));
});

const searchRoute = (price: number | undefined, billing?: 'per_query' | 'per_request', more = {}) =>
  endpoint({
    capabilities: { web_search: true },
    ...(price === undefined ? {} : { search_price_per_query: price }),
    ...(billing === undefined ? {} : { search_billing: billing }),
    ...more,
  });

test('refused: search-priced endpoints of one model that bill search in different units', () => {
  // The second endpoint bills per query by default; the third disagrees with it.
  const document = config([
    model('gateway/ok', [searchRoute(0.01, 'per_request')]),
    model('gateway/m', [searchRoute(undefined, 'per_request'), searchRoute(0.01), searchRoute(0.005, 'per_request')]),
  ]);
  assert.throws(() => buildCatalog(document), refusedWith('/models/1/endpoints/2/search_billing'));
  // Disabled endpoints are configuration too, as for pricing.unit.
  const disabled = config([model('gateway/m', [searchRoute(0.01, 'per_query'), searchRoute(0.005, 'per_request', { enabled: false })])]);
  assert.throws(() => buildCatalog(disabled), refusedWith('/models/0/endpoints/1/search_billing'));
});

test('search prices in one unit are compared: the lowest per-request price is shown', () => {
  const catalog = buildCatalog(config([model('gateway/m', [searchRoute(0.03, 'per_request'), searchRoute(0.02, 'per_request')])]));
  assert.equal(rowOf(catalog, 'gateway/m').price_search_per_query, 0.02);
});

test('a value outside a fixed set is refused with the allowed values', () => {
  const document = config([model('gateway/m', [endpoint()])]);
  const wrongKind = dump({ ...document, providers: [{ ...document.providers[0], kind: 'opneai' }] });
  assert.throws(
    () => parseConfig(wrongKind),
    (error: unknown) =>
      refusedWith('/providers/0/kind')(error) &&
      (error as Error).message.endsWith('must be one of "openai", "openai-responses", "anthropic", "gemini", "openai-images", "gpu-pool", "simulated"'),
  );
  const wrongUnit = config([model('gateway/m', [endpoint({ pricing: { unit: 'per_token' as 'per_1m_tokens', input_per_1m: 1 } })])]);
  assert.throws(
    () => parseConfig(dump(wrongUnit)),
    (error: unknown) =>
      refusedWith('/models/0/endpoints/0/pricing/unit')(error) &&
      (error as Error).message.endsWith('must be one of "per_1m_tokens", "per_image", "per_second", "per_request"'),
  );
});
