/**
 * The cost of a finished call, from the usage the provider reported. Everything is pico-USD
 * integer arithmetic: tokens × (pico-USD per token) is exact, and the account multiplier is applied
 * once to the total, the only place a fraction can be rounded (up; see core/money.ts).
 */
import type { Usage } from '../canonical/index.ts';
import { cacheWritesByLifetime, totalInputTokens } from '../canonical/index.ts';
import type { EndpointPrices, TokenRates } from '../catalog/types.ts';
import { applyRate, type Picos, type RateMultiplier } from '../core/money.ts';

/**
 * The tier that prices a call with `inputTokens` of prompt (uncached + cache read + cache write).
 * The threshold is exclusive: a prompt of exactly `thresholdTokens` is billed at standard rates,
 * one token more and every token of the call (output included) moves to the long-context rates.
 */
export function tierFor(prices: EndpointPrices, inputTokens: number): TokenRates {
  const longContext = prices.longContext;
  return longContext && inputTokens > longContext.thresholdTokens ? longContext : prices.standard;
}

/** Reference cost before the account multiplier. */
export function referenceCost(prices: EndpointPrices, usage: Usage, searchUnits: number): Picos {
  const rates = tierFor(prices, totalInputTokens(usage));
  const input = rates.input ?? 0n;
  // A tier without its own cache rate bills cached tokens as ordinary input of the same tier:
  // never cheaper than configured, and never a rate borrowed from the other tier.
  const cacheRead = rates.cacheRead ?? input;
  const cacheWrite = rates.cacheWrite ?? input;
  // A tier without a 1-hour rate bills 1-hour writes as 5-minute ones (docs/billing.md).
  const cacheWrite1h = rates.cacheWrite1h ?? cacheWrite;
  const output = rates.output ?? 0n;
  const writes = cacheWritesByLifetime(usage);
  return (
    BigInt(usage.inputTokens) * input +
    BigInt(usage.cacheReadTokens) * cacheRead +
    BigInt(writes.fiveMinute) * cacheWrite +
    BigInt(writes.oneHour) * cacheWrite1h +
    BigInt(usage.outputTokens) * output +
    (prices.perRequest ?? 0n) +
    BigInt(searchUnits) * (prices.searchPerUnit ?? 0n)
  );
}

/**
 * What the cache reads of a call saved: their tokens at the tier's uncached input rate less their
 * cache read rate, at the payer's rate. Shown in usage, never charged or credited.
 */
export function cacheReadSavings(prices: EndpointPrices, usage: Usage, rate: RateMultiplier): Picos {
  if (usage.cacheReadTokens === 0) return 0n;
  const rates = tierFor(prices, totalInputTokens(usage));
  const input = rates.input ?? 0n;
  const saved = BigInt(usage.cacheReadTokens) * (input - (rates.cacheRead ?? input));
  return saved > 0n ? applyRate(saved, rate) : 0n;
}

/** What the owner is charged: the reference cost times the account rate. */
export function costOfCall(prices: EndpointPrices, usage: Usage, searchUnits: number, rate: RateMultiplier): Picos {
  return applyRate(referenceCost(prices, usage, searchUnits), rate);
}
