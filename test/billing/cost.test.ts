/** Cost from usage: tiers with an exclusive threshold, cache rates and their fallback, search, the account rate. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cacheReadSavings, costOfCall, referenceCost, tierFor } from '../../src/billing/cost.ts';
import { searchUnits } from '../../src/billing/search-units.ts';
import { parseRateMultiplier, UNIT_RATE } from '../../src/core/money.ts';
import { endpoint, routeOf } from '../chat/helpers.ts';

const route = routeOf(
  endpoint('m', {
    pricing: {
      unit: 'per_1m_tokens',
      input_per_1m: 3,
      output_per_1m: 15,
      cache_read_per_1m: 0.3,
      long_context: { threshold_tokens: 1000, input_per_1m: 6, output_per_1m: 22.5 },
    },
    search_price_per_query: 0.01,
  }),
);
const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({
  inputTokens: input,
  cacheReadTokens: cacheRead,
  cacheWriteTokens: cacheWrite,
  outputTokens: output,
  reasoningTokens: 0,
});

describe('referenceCost', () => {
  test('standard tier: tokens × pico-USD per token, exactly', () => {
    assert.equal(referenceCost(route.prices, usage(100, 10), 0), 100n * 3_000_000n + 10n * 15_000_000n);
  });

  test('the threshold is exclusive and counts every input token, cached or not', () => {
    assert.equal(tierFor(route.prices, 1000), route.prices.standard);
    assert.equal(tierFor(route.prices, 1001), route.prices.longContext);
    assert.equal(referenceCost(route.prices, usage(1000, 10), 0), 1000n * 3_000_000n + 10n * 15_000_000n);
    // 900 uncached + 101 cache reads = 1001 input tokens: every token at long-context rates.
    assert.equal(referenceCost(route.prices, usage(900, 10, 101), 0), 900n * 6_000_000n + 101n * 6_000_000n + 10n * 22_500_000n);
  });

  test('a missing cache rate bills those tokens at the tier’s input rate', () => {
    // Standard tier: cache read 0.3 is set, cache write is not.
    assert.equal(referenceCost(route.prices, usage(10, 0, 20, 30), 0), 10n * 3_000_000n + 20n * 300_000n + 30n * 3_000_000n);
  });

  test('search units at the search price', () => {
    assert.equal(referenceCost(route.prices, usage(0, 0), 3), 3n * 10_000_000_000n);
  });
});

describe('referenceCost: cache writes at two rates', () => {
  // Anthropic-like rates: writes for 5 minutes at 1.25 × input, for an hour at 2 × input; the
  // long-context tier has its own of both.
  const twoRates = routeOf(
    endpoint('m', {
      pricing: {
        unit: 'per_1m_tokens',
        input_per_1m: 3,
        output_per_1m: 15,
        cache_read_per_1m: 0.3,
        cache_write_per_1m: 3.75,
        cache_write_1h_per_1m: 6,
        long_context: {
          threshold_tokens: 1000,
          input_per_1m: 6,
          output_per_1m: 22.5,
          cache_read_per_1m: 0.6,
          cache_write_per_1m: 7.5,
          cache_write_1h_per_1m: 12,
        },
      },
    }),
  ).prices;
  const mixed = (uncached: number, read: number, write5m: number, write1h: number, output: number) => ({
    ...usage(uncached, output, read, write5m + write1h),
    cacheWrite1hTokens: write1h,
  });

  test('standard tier: uncached × input + read × read + 5m × write + 1h × write 1h + output × output, exactly', () => {
    assert.equal(
      referenceCost(twoRates, mixed(100, 200, 300, 400, 50), 0),
      100n * 3_000_000n + 200n * 300_000n + 300n * 3_750_000n + 400n * 6_000_000n + 50n * 15_000_000n,
    );
  });

  test('long-context tier: every part at that tier’s own rates, 1-hour writes included', () => {
    // 1 + 200 + 300 + 500 = 1001 input tokens: past the exclusive threshold.
    assert.equal(
      referenceCost(twoRates, mixed(1, 200, 300, 500, 50), 0),
      1n * 6_000_000n + 200n * 600_000n + 300n * 7_500_000n + 500n * 12_000_000n + 50n * 22_500_000n,
    );
  });

  test('without a reported split every write is a 5-minute one; a 1-hour count beyond the writes is capped', () => {
    assert.equal(referenceCost(twoRates, usage(10, 0, 0, 40), 0), 10n * 3_000_000n + 40n * 3_750_000n);
    assert.equal(referenceCost(twoRates, { ...usage(10, 0, 0, 40), cacheWrite1hTokens: 90 }, 0), 10n * 3_000_000n + 40n * 6_000_000n);
  });

  test('a tier without a 1-hour rate bills 1-hour writes at its 5-minute rate, or at input without either', () => {
    const fiveMinuteOnly = routeOf(endpoint('m', { pricing: { unit: 'per_1m_tokens', input_per_1m: 3, output_per_1m: 15, cache_write_per_1m: 3.75 } })).prices;
    assert.equal(referenceCost(fiveMinuteOnly, mixed(0, 0, 10, 20, 0), 0), 30n * 3_750_000n);
    assert.equal(referenceCost(route.prices, mixed(0, 0, 10, 20, 0), 0), 30n * 3_000_000n);
  });
});

describe('costOfCall', () => {
  test('the account rate applies once to the total, rounding a fractional pico up', () => {
    const base = referenceCost(route.prices, usage(7, 3), 0);
    assert.equal(costOfCall(route.prices, usage(7, 3), 0, UNIT_RATE), base);
    assert.equal(costOfCall(route.prices, usage(7, 3), 0, parseRateMultiplier('1.5')), (base * 3n) / 2n);
    const third = parseRateMultiplier('0.333333');
    assert.equal(costOfCall(route.prices, usage(1, 0), 0, third), 999_999n);
  });
});

describe('cacheReadSavings', () => {
  test('cache reads at the tier’s input rate less their cache rate, at the payer’s rate; none without reads or a cheaper rate', () => {
    assert.equal(cacheReadSavings(route.prices, usage(10, 5, 200), UNIT_RATE), 200n * (3_000_000n - 300_000n));
    assert.equal(cacheReadSavings(route.prices, usage(10, 5, 200), parseRateMultiplier('1.5')), (200n * 2_700_000n * 3n) / 2n);
    assert.equal(cacheReadSavings(route.prices, usage(10, 5), UNIT_RATE), 0n);
    // The long-context tier has no cache rate: its reads are billed as input, and save nothing.
    assert.equal(cacheReadSavings(route.prices, usage(900, 5, 200), UNIT_RATE), 0n);
  });
});

describe('searchUnits', () => {
  const perRequest = routeOf(endpoint('m', { search_price_per_query: 0.01, search_billing: 'per_request' })).prices;
  const info = { queries: ['a', 'b'], billedQueries: 2 };

  test('per query: the queries the provider ran; per request: one per successful request', () => {
    assert.equal(searchUnits(route.prices, true, info, true), 2);
    assert.equal(searchUnits(route.prices, true, undefined, true), 0);
    assert.equal(searchUnits(perRequest, true, undefined, true), 1);
    assert.equal(searchUnits(perRequest, true, info, false), 0);
    assert.equal(searchUnits(route.prices, true, info, false), 2);
  });

  test('no search requested, nothing billed', () => {
    assert.equal(searchUnits(route.prices, false, info, true), 0);
  });
});
