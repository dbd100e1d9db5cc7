/**
 * The attempt plan: a flat, ordered list of the routes a request may use. Order follows
 * `provider.sort` (price by default), ties keep the config order; with `allow_fallbacks: false`
 * the plan is the first route only.
 */
import type { ProviderPreferences, ProviderSort } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';

export function orderRoutes(routes: readonly RouteEndpoint[], sort: ProviderSort = 'price'): RouteEndpoint[] {
  const key = SORT_KEYS[sort];
  // Array.prototype.sort is stable, so equal keys keep the config order.
  return [...routes].sort((a, b) => compareKeys(key(a), key(b)));
}

/** Routes the request may fall back through, in order. */
export function attemptPlan(eligible: readonly RouteEndpoint[], preferences: ProviderPreferences | undefined): RouteEndpoint[] {
  return preferences?.allowFallbacks === false ? eligible.slice(0, 1) : [...eligible];
}

/** Smaller sorts first; undefined (no observation) sorts last. */
type SortKey = number | undefined;

const SORT_KEYS: Record<ProviderSort, (route: RouteEndpoint) => SortKey> = {
  // One comparable number per route: the sum of its rates. The routes of one model share a billing
  // unit, so only the rates of that unit are set (standard input and output for tokens, the media
  // rate for images and video, the flat rate per request).
  price: (route) => {
    const prices = route.prices;
    return Number(
      (prices.standard.input ?? 0n) + (prices.standard.output ?? 0n) + (prices.perImage ?? 0n) + (prices.perSecond ?? 0n) + (prices.perRequest ?? 0n),
    );
  },
  latency: (route) => route.latencyMs,
  throughput: (route) => (route.throughputTps === undefined ? undefined : -route.throughputTps),
};

function compareKeys(a: SortKey, b: SortKey): number {
  if (a === b) return 0;
  if (a === undefined) return 1;
  if (b === undefined) return -1;
  return a - b;
}
