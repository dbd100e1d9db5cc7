/**
 * Web search billing units. Providers count search differently (docs/chat-completions.md,
 * `billed_queries`): some per executed query, others one unit per successful search-enabled
 * request even when nothing was found. The endpoint's `searchBilling` says which.
 */
import type { WebSearchInfo } from '../canonical/index.ts';
import { WORST_CASE_SEARCH_QUERIES } from '../catalog/request-bounds.ts';
import type { EndpointPrices } from '../catalog/types.ts';

/**
 * Units to bill. `succeeded` is false for a failed or cut-off call: a per-request search is billed
 * only for a successful request, per-query search for the queries the provider reported running.
 */
export function searchUnits(prices: EndpointPrices, searchRequested: boolean, info: WebSearchInfo | undefined, succeeded: boolean): number {
  if (!searchRequested) return 0;
  switch (prices.searchBilling) {
    case 'per_request':
      return succeeded ? 1 : 0;
    case 'per_query':
      return info?.billedQueries ?? 0;
    default: {
      const unreachable: never = prices.searchBilling;
      return unreachable;
    }
  }
}

export function worstCaseSearchUnits(prices: EndpointPrices): number {
  return prices.searchBilling === 'per_request' ? 1 : WORST_CASE_SEARCH_QUERIES;
}
