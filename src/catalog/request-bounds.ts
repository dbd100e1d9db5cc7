/**
 * The most a text request may use on a route, where neither the client nor the route's limits say:
 * the credit quote reserves for these bounds and the protocols that must send an explicit bound
 * upstream send the same numbers, so what is reserved is what the upstream can produce.
 */
import type { CanonicalRequest } from '../canonical/index.ts';
import type { RouteEndpoint } from './types.ts';

/**
 * Output budget assumed when neither the request nor the endpoint's `limits.max_tokens` bounds
 * it. A reply longer than this is still billed in full at settlement (as far as the balance goes).
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/** Search queries one request may run where the provider bills per executed query. */
export const WORST_CASE_SEARCH_QUERIES = 5;

export function maxOutputTokens(request: Pick<CanonicalRequest, 'maxOutputTokens'>, endpoint: RouteEndpoint): number {
  return request.maxOutputTokens ?? endpoint.limits.max_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
}
