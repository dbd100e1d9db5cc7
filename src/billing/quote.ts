/**
 * The worst-case price of a text request, reserved before any provider is called: the estimated
 * prompt at the most expensive input rate the tier has, plus the largest output the request
 * allows, plus the worst-case search units, taken over every endpoint the attempt plan may use.
 */
import type { CanonicalRequest } from '../canonical/index.ts';
import type { RouteEndpoint, TokenRates } from '../catalog/types.ts';
import { applyRate, type Picos, type RateMultiplier } from '../core/money.ts';
import { maxOutputTokens } from '../catalog/request-bounds.ts';
import { tierFor } from './cost.ts';
import { worstCaseSearchUnits } from './search-units.ts';
import type { ImageFamily } from '../tokens/image-tokens.ts';
import type { ProviderConfig } from '../config/schema.ts';

/**
 * Whose documented image formula bounds an image on a provider of this kind (tokens/image-tokens.ts);
 * undefined: every family's (a simulated provider, a GPU pool).
 */
export function imageFamilyOf(kind: ProviderConfig['kind']): ImageFamily | undefined {
  switch (kind) {
    case 'openai':
    case 'openai-responses':
    case 'openai-images':
      return 'openai';
    case 'anthropic':
      return 'anthropic';
    case 'gemini':
      return 'gemini';
    case 'gpu-pool':
    case 'simulated':
      return undefined;
    default: {
      const unknown: never = kind;
      return unknown;
    }
  }
}

/** Reference (pre-multiplier) worst case on one endpoint. */
export function quoteEndpoint(request: CanonicalRequest, endpoint: RouteEndpoint, promptTokens: number): Picos {
  const prices = endpoint.prices;
  const rates = tierFor(prices, promptTokens);
  let amount = BigInt(promptTokens) * worstInputRate(rates) + BigInt(maxOutputTokens(request, endpoint)) * (rates.output ?? 0n) + (prices.perRequest ?? 0n);
  if (request.webSearch && prices.searchPerUnit !== undefined) {
    amount += BigInt(worstCaseSearchUnits(prices)) * prices.searchPerUnit;
  }
  return amount;
}

/**
 * The reservation amount of any kind of output: the dearest route of the attempt plan (any of them
 * may end up serving the call), times the account rate.
 */
export function worstCaseQuote(endpoints: readonly RouteEndpoint[], quoteOne: (endpoint: RouteEndpoint) => Picos, rate: RateMultiplier): Picos {
  let worst = 0n;
  for (const endpoint of endpoints) {
    const amount = quoteOne(endpoint);
    if (amount > worst) worst = amount;
  }
  return applyRate(worst, rate);
}

/**
 * A prompt token may end up uncached, read from cache or written to it for 5 minutes or an hour;
 * assume the dearest.
 */
function worstInputRate(rates: TokenRates): Picos {
  let worst = rates.input ?? 0n;
  for (const rate of [rates.cacheRead, rates.cacheWrite, rates.cacheWrite1h]) {
    if (rate !== undefined && rate > worst) worst = rate;
  }
  return worst;
}
