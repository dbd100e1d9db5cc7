/**
 * The worst-case price of a request, reserved before any provider is called: the estimated prompt
 * at the most expensive input rate the tier has, plus the largest output the request allows, plus
 * the worst-case search units, taken over every endpoint the attempt plan may use.
 */
import type { CanonicalRequest } from '../canonical/index.ts';
import type { RouteEndpoint, TokenRates } from '../catalog/types.ts';
import { applyRate, type Picos, type RateMultiplier } from '../core/money.ts';
import { tierFor } from './cost.ts';
import { worstCaseSearchUnits } from './search-units.ts';

/**
 * Output budget assumed when neither the request nor the endpoint's `limits.max_tokens` bounds
 * it. A reply longer than this is still billed in full at settlement (as far as the balance goes).
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

export function maxOutputTokens(request: CanonicalRequest, endpoint: RouteEndpoint): number {
  return request.maxOutputTokens ?? endpoint.limits.max_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
}

/** Reference (pre-multiplier) worst case on one endpoint. */
export function quoteEndpoint(request: CanonicalRequest, endpoint: RouteEndpoint, promptTokens: number): Picos {
  const prices = endpoint.prices;
  const rates = tierFor(prices, promptTokens);
  let amount =
    BigInt(promptTokens) * worstInputRate(rates) +
    BigInt(maxOutputTokens(request, endpoint)) * (rates.output ?? 0n) +
    (prices.perRequest ?? 0n);
  if (request.webSearch && prices.searchPerUnit !== undefined) {
    amount += BigInt(worstCaseSearchUnits(prices)) * prices.searchPerUnit;
  }
  return amount;
}

/** The reservation amount: the dearest endpoint of the plan, times the account rate. */
export function quoteRequest(
  request: CanonicalRequest,
  endpoints: readonly RouteEndpoint[],
  promptTokens: number,
  rate: RateMultiplier,
): Picos {
  let worst = 0n;
  for (const endpoint of endpoints) {
    const amount = quoteEndpoint(request, endpoint, promptTokens);
    if (amount > worst) worst = amount;
  }
  return applyRate(worst, rate);
}

/** A prompt token may end up uncached, read from cache or written to it; assume the dearest. */
function worstInputRate(rates: TokenRates): Picos {
  let worst = rates.input ?? 0n;
  if (rates.cacheRead !== undefined && rates.cacheRead > worst) worst = rates.cacheRead;
  if (rates.cacheWrite !== undefined && rates.cacheWrite > worst) worst = rates.cacheWrite;
  return worst;
}
