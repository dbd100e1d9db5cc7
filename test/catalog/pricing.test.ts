/**
 * ModelPricing rules 1–5 and LongContextPricing, one table row per rule with the expected public
 * pricing worked out by hand from the endpoints.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCatalog } from '../../src/catalog/catalog.ts';
import type { ModelPricing as PricingRow } from '../../src/catalog/schemas.ts';
import type { EndpointConfig } from '../../src/config/schema.ts';
import type { Consent } from '../../src/storage/store.ts';
import { CONSENT, config, endpoint, model, pricingOf, rowOf } from './builders.ts';

interface Case {
  readonly name: string;
  readonly endpoints: readonly EndpointConfig[];
  readonly consent?: Consent;
  readonly expected: PricingRow;
}

const tokens = (input: number, output: number, more: Record<string, unknown> = {}) => ({
  unit: 'per_1m_tokens' as const,
  input_per_1m: input,
  output_per_1m: output,
  ...more,
});

const cases: Case[] = [
  {
    name: 'rule 2: the one endpoint with the lowest input+output sum supplies both rates (3+5 < 1+10)',
    endpoints: [endpoint({ pricing: tokens(1, 10) }), endpoint({ pricing: tokens(3, 5) })],
    expected: { unit: 'per_1m_tokens', input_per_1m: 3, output_per_1m: 5 },
  },
  {
    name: 'rule 2: cache rates come from the pair endpoint, never from a cheaper cache elsewhere',
    endpoints: [
      endpoint({ pricing: tokens(1, 10, { cache_read_per_1m: 0.1, cache_write_per_1m: 1.25 }) }),
      endpoint({ pricing: tokens(3, 5, { cache_read_per_1m: 0.5 }) }),
    ],
    expected: { unit: 'per_1m_tokens', input_per_1m: 3, output_per_1m: 5, cache_read_per_1m: 0.5 },
  },
  {
    name: 'rule 2: the 1-hour cache-write rate comes from the pair endpoint, with its other cache rates',
    endpoints: [
      endpoint({ pricing: tokens(1, 10, { cache_write_per_1m: 1.25, cache_write_1h_per_1m: 2 }) }),
      endpoint({ pricing: tokens(3, 5, { cache_read_per_1m: 0.3, cache_write_per_1m: 3.75, cache_write_1h_per_1m: 6 }) }),
    ],
    expected: { unit: 'per_1m_tokens', input_per_1m: 3, output_per_1m: 5, cache_read_per_1m: 0.3, cache_write_per_1m: 3.75, cache_write_1h_per_1m: 6 },
  },
  {
    name: 'rule 2: a pair endpoint without a 1-hour rate shows none, never one borrowed from elsewhere',
    endpoints: [
      endpoint({ pricing: tokens(1, 10, { cache_write_per_1m: 1.25, cache_write_1h_per_1m: 2 }) }),
      endpoint({ pricing: tokens(3, 5, { cache_write_per_1m: 3.75 }) }),
    ],
    expected: { unit: 'per_1m_tokens', input_per_1m: 3, output_per_1m: 5, cache_write_per_1m: 3.75 },
  },
  {
    name: "rule 3: the 1-hour rate's list price is the pair endpoint's, and counts in discount_percent",
    endpoints: [
      endpoint({
        pricing: tokens(3, 12, {
          cache_write_per_1m: 3.75,
          cache_write_1h_per_1m: 4.5,
          list: { input_per_1m: 4, output_per_1m: 16, cache_write_per_1m: 5, cache_write_1h_per_1m: 8 },
        }),
      }),
      endpoint({ provider: 'p2', pricing: tokens(4, 16, { cache_write_1h_per_1m: 1, list: { cache_write_1h_per_1m: 10 } }) }),
    ],
    expected: {
      unit: 'per_1m_tokens',
      input_per_1m: 3,
      output_per_1m: 12,
      cache_write_per_1m: 3.75,
      cache_write_1h_per_1m: 4.5,
      list: { input_per_1m: 4, output_per_1m: 16, cache_write_per_1m: 5, cache_write_1h_per_1m: 8 },
      // 25 % off input, output and 5-minute writes; 43.75 % off 1-hour writes: the smallest.
      discount_percent: 25,
    },
  },
  {
    name: 'rule 3: a 1-hour rate at its list price means list without discount_percent',
    endpoints: [endpoint({ pricing: tokens(3, 12, { cache_write_1h_per_1m: 6, list: { input_per_1m: 4, cache_write_1h_per_1m: 6 } }) })],
    expected: { unit: 'per_1m_tokens', input_per_1m: 3, output_per_1m: 12, cache_write_1h_per_1m: 6, list: { input_per_1m: 4, cache_write_1h_per_1m: 6 } },
  },
  {
    name: "long context: a tier's 1-hour cache-write rate is billed, not shown (no cache-write rate of that tier is)",
    endpoints: [
      endpoint({
        pricing: tokens(2, 8, {
          cache_write_1h_per_1m: 4,
          long_context: { threshold_tokens: 1000, input_per_1m: 4, output_per_1m: 16, cache_write_per_1m: 5, cache_write_1h_per_1m: 8 },
        }),
      }),
    ],
    expected: {
      unit: 'per_1m_tokens',
      input_per_1m: 2,
      output_per_1m: 8,
      cache_write_1h_per_1m: 4,
      long_context: { threshold_tokens: 1000, base_input_per_1m: 4, base_output_per_1m: 16, input_per_1m: 4, output_per_1m: 16 },
    },
  },
  {
    name: 'rule 2: an endpoint without a complete input/output pair never sets the token rates',
    endpoints: [endpoint({ pricing: { input_per_1m: 0.01 } }), endpoint({ pricing: tokens(2, 6) })],
    expected: { unit: 'per_1m_tokens', input_per_1m: 2, output_per_1m: 6 },
  },
  {
    name: 'rule 2: standard and long-context tiers are chosen independently, each with its own cache rate',
    endpoints: [
      endpoint({
        pricing: tokens(2, 8, {
          cache_read_per_1m: 0.2,
          long_context: { threshold_tokens: 100000, input_per_1m: 4, output_per_1m: 16, cache_read_per_1m: 0.4 },
        }),
      }),
      endpoint({
        pricing: tokens(3, 9, {
          long_context: { threshold_tokens: 200000, input_per_1m: 3.5, output_per_1m: 15, cache_read_per_1m: 0.35 },
        }),
      }),
      endpoint({ pricing: tokens(1, 4, { cache_read_per_1m: 0.1 }) }),
    ],
    expected: {
      unit: 'per_1m_tokens',
      input_per_1m: 1,
      output_per_1m: 4,
      cache_read_per_1m: 0.1,
      long_context: {
        threshold_tokens: 200000,
        base_input_per_1m: 3.5,
        base_output_per_1m: 15,
        input_per_1m: 3.5,
        output_per_1m: 15,
        cache_read_per_1m: 0.35,
      },
    },
  },
  {
    name: 'long context without a cache-read rate omits it',
    endpoints: [endpoint({ pricing: tokens(2, 8, { long_context: { threshold_tokens: 128000, input_per_1m: 4, output_per_1m: 12 } }) })],
    expected: {
      unit: 'per_1m_tokens',
      input_per_1m: 2,
      output_per_1m: 8,
      long_context: { threshold_tokens: 128000, base_input_per_1m: 4, base_output_per_1m: 12, input_per_1m: 4, output_per_1m: 12 },
    },
  },
  {
    name: 'rule 3: every listed rate discounted → list and the smallest discount (20 % and 33.33 % → 20)',
    endpoints: [endpoint({ pricing: tokens(2.4, 10, { cache_read_per_1m: 0.24, list: { input_per_1m: 3, output_per_1m: 15, cache_read_per_1m: 0.3 } }) })],
    expected: {
      unit: 'per_1m_tokens',
      input_per_1m: 2.4,
      output_per_1m: 10,
      cache_read_per_1m: 0.24,
      list: { input_per_1m: 3, output_per_1m: 15, cache_read_per_1m: 0.3 },
      discount_percent: 20,
    },
  },
  {
    name: 'rule 3: a discount that does not terminate is rounded down to two decimals (1/3 → 33.33)',
    endpoints: [endpoint({ pricing: tokens(2, 10, { list: { input_per_1m: 3, output_per_1m: 15 } }) })],
    expected: { unit: 'per_1m_tokens', input_per_1m: 2, output_per_1m: 10, list: { input_per_1m: 3, output_per_1m: 15 }, discount_percent: 33.33 },
  },
  {
    name: 'rule 3: only some rates discounted → list stays, discount_percent omitted',
    endpoints: [endpoint({ pricing: tokens(1.5, 8, { list: { input_per_1m: 2, output_per_1m: 8 } }) })],
    expected: { unit: 'per_1m_tokens', input_per_1m: 1.5, output_per_1m: 8, list: { input_per_1m: 2, output_per_1m: 8 } },
  },
  {
    name: 'rule 3: nothing discounted → both list and discount_percent omitted',
    endpoints: [endpoint({ pricing: tokens(2, 8, { list: { input_per_1m: 2, output_per_1m: 8 } }) })],
    expected: { unit: 'per_1m_tokens', input_per_1m: 2, output_per_1m: 8 },
  },
  {
    name: 'list only carries keys that are shown rates',
    endpoints: [endpoint({ pricing: tokens(1, 2, { list: { input_per_1m: 2, output_per_1m: 4, cache_read_per_1m: 0.5, per_image: 1 } }) })],
    expected: { unit: 'per_1m_tokens', input_per_1m: 1, output_per_1m: 2, list: { input_per_1m: 2, output_per_1m: 4 }, discount_percent: 50 },
  },
  {
    name: 'list comes from the endpoint that supplied the shown rate, not from another endpoint',
    endpoints: [endpoint({ pricing: tokens(3, 12, { list: { input_per_1m: 4, output_per_1m: 16 } }) }), endpoint({ pricing: tokens(2, 8) })],
    expected: { unit: 'per_1m_tokens', input_per_1m: 2, output_per_1m: 8 },
  },
  {
    name: 'conditions: the lowest rate needs community supply',
    endpoints: [endpoint({ pricing: tokens(2, 8) }), endpoint({ provider: 'p2', supply: 'community', pricing: tokens(1, 4) })],
    expected: { unit: 'per_1m_tokens', conditions: ['community_supply'], input_per_1m: 1, output_per_1m: 4 },
  },
  {
    name: 'conditions: a tie goes to the endpoint that needs no consent',
    endpoints: [endpoint({ provider: 'p2', supply: 'community', pricing: tokens(1, 4) }), endpoint({ pricing: tokens(2, 3) })],
    expected: { unit: 'per_1m_tokens', input_per_1m: 2, output_per_1m: 3 },
  },
  {
    name: 'ties: equal input+output sums and equal consent → the earlier endpoint supplies every rate (1+3 = 2+2)',
    endpoints: [
      endpoint({ pricing: tokens(1, 3, { cache_read_per_1m: 0.1, list: { input_per_1m: 2, output_per_1m: 4 } }) }),
      endpoint({ provider: 'p2', pricing: tokens(2, 2, { cache_read_per_1m: 0.2 }) }),
    ],
    expected: {
      unit: 'per_1m_tokens',
      input_per_1m: 1,
      output_per_1m: 3,
      cache_read_per_1m: 0.1,
      list: { input_per_1m: 2, output_per_1m: 4 },
      // 1 vs 2 is 50 % off, 3 vs 4 is 25 % off: the smaller is shown.
      discount_percent: 25,
    },
  },
  {
    name: 'ties: the same two endpoints in the other config order → the other one supplies every rate',
    endpoints: [
      endpoint({ provider: 'p2', pricing: tokens(2, 2, { cache_read_per_1m: 0.2 }) }),
      endpoint({ pricing: tokens(1, 3, { cache_read_per_1m: 0.1, list: { input_per_1m: 2, output_per_1m: 4 } }) }),
    ],
    expected: { unit: 'per_1m_tokens', input_per_1m: 2, output_per_1m: 2, cache_read_per_1m: 0.2 },
  },
  {
    name: 'ties: equal per-image rates → the earlier endpoint, with its own list price',
    endpoints: [
      endpoint({ pricing: { unit: 'per_image', per_image: 0.04 } }),
      endpoint({ provider: 'p2', pricing: { unit: 'per_image', per_image: 0.04, list: { per_image: 0.05 } } }),
    ],
    expected: { unit: 'per_image', per_image: 0.04 },
  },
  {
    name: 'conditions: combined across tiers (standard first-party, long context on a training tier)',
    endpoints: [
      endpoint({ pricing: tokens(1, 4) }),
      endpoint({
        provider: 'p3',
        training_use: 'opt_in',
        pricing: tokens(5, 20, { long_context: { threshold_tokens: 1000, input_per_1m: 2, output_per_1m: 8 } }),
      }),
    ],
    expected: {
      unit: 'per_1m_tokens',
      conditions: ['training_use'],
      input_per_1m: 1,
      output_per_1m: 4,
      long_context: { threshold_tokens: 1000, base_input_per_1m: 2, base_output_per_1m: 8, input_per_1m: 2, output_per_1m: 8 },
    },
  },
  {
    name: 'conditions: in a view without community consent the community endpoint does not count',
    endpoints: [endpoint({ pricing: tokens(2, 8) }), endpoint({ provider: 'p2', supply: 'community', pricing: tokens(1, 4) })],
    consent: CONSENT.none,
    expected: { unit: 'per_1m_tokens', input_per_1m: 2, output_per_1m: 8 },
  },
  {
    name: 'is_free: every token rate zero',
    endpoints: [endpoint({ pricing: tokens(0, 0, { cache_read_per_1m: 0, cache_write_per_1m: 0 }) })],
    expected: { unit: 'per_1m_tokens', is_free: true, input_per_1m: 0, output_per_1m: 0, cache_read_per_1m: 0, cache_write_per_1m: 0 },
  },
  {
    name: 'is_free: absent when a cache rate is not free',
    endpoints: [endpoint({ pricing: tokens(0, 0, { cache_write_per_1m: 0.1 }) })],
    expected: { unit: 'per_1m_tokens', input_per_1m: 0, output_per_1m: 0, cache_write_per_1m: 0.1 },
  },
  {
    name: 'is_free: every token rate zero, the 1-hour cache write included',
    endpoints: [endpoint({ pricing: tokens(0, 0, { cache_write_per_1m: 0, cache_write_1h_per_1m: 0 }) })],
    expected: { unit: 'per_1m_tokens', is_free: true, input_per_1m: 0, output_per_1m: 0, cache_write_per_1m: 0, cache_write_1h_per_1m: 0 },
  },
  {
    name: 'is_free: absent when the 1-hour cache write is not free',
    endpoints: [endpoint({ pricing: tokens(0, 0, { cache_write_per_1m: 0, cache_write_1h_per_1m: 0.1 }) })],
    expected: { unit: 'per_1m_tokens', input_per_1m: 0, output_per_1m: 0, cache_write_per_1m: 0, cache_write_1h_per_1m: 0.1 },
  },
  {
    name: "is_free: absent when the long-context tier's 1-hour cache write costs something",
    endpoints: [
      endpoint({
        pricing: tokens(0, 0, { long_context: { threshold_tokens: 10, input_per_1m: 0, output_per_1m: 0, cache_write_1h_per_1m: 1 } }),
      }),
    ],
    expected: {
      unit: 'per_1m_tokens',
      input_per_1m: 0,
      output_per_1m: 0,
      long_context: { threshold_tokens: 10, base_input_per_1m: 0, base_output_per_1m: 0, input_per_1m: 0, output_per_1m: 0 },
    },
  },
  {
    name: 'is_free: absent when the long-context tier costs something',
    endpoints: [endpoint({ pricing: tokens(0, 0, { long_context: { threshold_tokens: 10, input_per_1m: 1, output_per_1m: 1 } }) })],
    expected: {
      unit: 'per_1m_tokens',
      input_per_1m: 0,
      output_per_1m: 0,
      long_context: { threshold_tokens: 10, base_input_per_1m: 1, base_output_per_1m: 1, input_per_1m: 1, output_per_1m: 1 },
    },
  },
  {
    name: 'is_free: a zero media price alone does not make a model free',
    endpoints: [endpoint({ pricing: { unit: 'per_image', per_image: 0 } })],
    expected: { unit: 'per_image', per_image: 0 },
  },
  {
    name: 'rule 5: a pinned endpoint never sets the public lowest price',
    endpoints: [endpoint({ pinned: true, pricing: tokens(1, 2) }), endpoint({ pricing: tokens(3, 4) })],
    expected: { unit: 'per_1m_tokens', input_per_1m: 3, output_per_1m: 4 },
  },
  {
    name: 'rule 5: with only pinned endpoints no rate is shown',
    endpoints: [endpoint({ pinned: true, pricing: tokens(1, 2) })],
    expected: { unit: 'per_1m_tokens' },
  },
  {
    name: 'disabled endpoints count for nothing',
    endpoints: [endpoint({ enabled: false, pricing: tokens(1, 2) }), endpoint({ pricing: tokens(3, 4) })],
    expected: { unit: 'per_1m_tokens', input_per_1m: 3, output_per_1m: 4 },
  },
  {
    name: "media: per_image is the lowest per-image rate, with that endpoint's list price",
    endpoints: [
      endpoint({ pricing: { unit: 'per_image', per_image: 0.04, list: { per_image: 0.05 } } }),
      endpoint({ provider: 'p2', pricing: { unit: 'per_image', per_image: 0.03, list: { per_image: 0.05 } } }),
    ],
    expected: { unit: 'per_image', per_image: 0.03, list: { per_image: 0.05 }, discount_percent: 40 },
  },
  {
    name: 'media: token rates and per-image rates are compared separately',
    endpoints: [
      endpoint({ pricing: { unit: 'per_image', per_image: 0.02, input_per_1m: 5, output_per_1m: 40 } }),
      endpoint({ provider: 'p2', pricing: { unit: 'per_image', per_image: 0.04, input_per_1m: 4, output_per_1m: 30 } }),
    ],
    expected: { unit: 'per_image', input_per_1m: 4, output_per_1m: 30, per_image: 0.02 },
  },
  {
    name: 'media: per_second and variants, each variant from its own lowest offer with the same key and meta',
    endpoints: [
      endpoint({
        pricing: {
          unit: 'per_second',
          per_second: 0.5,
          list: { per_second: 0.6 },
          variants: [
            { key: '720p', price: 0.3, meta: { resolution: '1280x720', fps: 24 } },
            { key: '1080p', price: 0.5, meta: { resolution: '1920x1080' } },
          ],
        },
      }),
      endpoint({
        provider: 'p2',
        supply: 'community',
        pricing: {
          unit: 'per_second',
          per_second: 0.55,
          variants: [
            // Same key and meta as above, keys in another order: the same variant, cheaper here.
            { key: '720p', price: 0.25, meta: { fps: 24, resolution: '1280x720' } },
            { key: '1080p', price: 0.45, meta: { resolution: '1920x1080', audio: true } },
          ],
        },
      }),
    ],
    expected: {
      unit: 'per_second',
      conditions: ['community_supply'],
      per_second: 0.5,
      list: { per_second: 0.6 },
      discount_percent: 16.66,
      variants: [
        { key: '720p', price: 0.25, meta: { fps: 24, resolution: '1280x720' } },
        { key: '1080p', price: 0.5, meta: { resolution: '1920x1080' } },
        { key: '1080p', price: 0.45, meta: { resolution: '1920x1080', audio: true } },
      ],
    },
  },
  {
    name: 'a variant without meta shows an empty meta object',
    endpoints: [endpoint({ pricing: { unit: 'per_second', per_second: 0.1, variants: [{ key: 'standard', price: 0.1 }] } })],
    expected: { unit: 'per_second', per_second: 0.1, variants: [{ key: 'standard', price: 0.1, meta: {} }] },
  },
  {
    name: 'exact decimals: tiny per-million rates print as configured',
    endpoints: [endpoint({ pricing: tokens(0.000125, 0.0005, { cache_read_per_1m: 0.000001 }) })],
    expected: { unit: 'per_1m_tokens', input_per_1m: 0.000125, output_per_1m: 0.0005, cache_read_per_1m: 0.000001 },
  },
];

describe('public pricing', () => {
  for (const { name, endpoints, consent, expected } of cases) {
    test(name, () => {
      assert.deepEqual(pricingOf(endpoints, consent), expected);
    });
  }

  test('rule 4: pricing.discount_percent and the top-level promotion are independent', () => {
    const catalog = buildCatalog(
      config([model('gateway/m', [endpoint({ pricing: tokens(1, 4, { list: { input_per_1m: 2, output_per_1m: 8 } }) })], { discount_percent: 15 })]),
    );
    const row = rowOf(catalog, 'gateway/m');
    assert.equal(row.pricing.discount_percent, 50);
    assert.equal(row.discount_percent, 15);
  });
});
