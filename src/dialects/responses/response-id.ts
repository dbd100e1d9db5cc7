/**
 * A response's id is its gateway request id under another prefix (`req_…` → `resp_…`,
 * docs/responses.md): GET /v1/responses/{id} finds the request log row, which holds the response
 * object the client got, by its key, with no table of its own.
 */
const REQUEST_PREFIX = 'req_';
const RESPONSE_PREFIX = 'resp_';

export function responseIdOf(requestId: string): string {
  return RESPONSE_PREFIX + requestId.slice(REQUEST_PREFIX.length);
}

/** The request id a response id stands for; undefined for a string that is no response id. */
export function requestIdOf(responseId: string): string | undefined {
  if (!responseId.startsWith(RESPONSE_PREFIX) || responseId.length === RESPONSE_PREFIX.length) return undefined;
  return REQUEST_PREFIX + responseId.slice(RESPONSE_PREFIX.length);
}
