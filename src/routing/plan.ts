/**
 * The attempt plan: a flat, ordered list of the routes a request may use. Order follows
 * `provider.sort` (price by default), ties keep the config order; with `allow_fallbacks: false`
 * the plan is the first route only. Sorting by latency or throughput uses what this instance
 * observed of an endpoint once it has enough samples (routing/endpoint-health.ts), the configured
 * `latency_ms` and `throughput_tps` otherwise.
 */
import type { ProviderPreferences, ProviderSort } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';

/** Observed figures of an endpoint; a figure is absent until there are enough samples of it. */
export interface ObservedFigures {
  observed(route: RouteEndpoint): { readonly latencyMs?: number; readonly throughputTps?: number };
}

export function orderRoutes(routes: readonly RouteEndpoint[], sort: ProviderSort = 'price', figures?: ObservedFigures): RouteEndpoint[] {
  const key = SORT_KEYS[sort];
  const measured = figures === undefined || sort === 'price' ? routes : routes.map((route) => withObserved(route, figures));
  // Array.prototype.sort is stable, so equal keys keep the config order.
  const sorted = measured.map((route, index) => ({ route: routes[index], key: key(route) })).sort((a, b) => compareKeys(a.key, b.key));
  return sorted.map((entry) => entry.route);
}

/** The route with its observed figures in place of the configured ones, where there are enough samples. */
function withObserved(route: RouteEndpoint, figures: ObservedFigures): RouteEndpoint {
  const observed = figures.observed(route);
  if (observed.latencyMs === undefined && observed.throughputTps === undefined) return route;
  return { ...route, latencyMs: observed.latencyMs ?? route.latencyMs, throughputTps: observed.throughputTps ?? route.throughputTps };
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
