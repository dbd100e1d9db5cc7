/**
 * `web_search_call` output items (the `web_search` built-in tool) → canonical
 * web-search info. The citations are the message's `url_citation` annotations (response.ts).
 *
 * OpenAI bills web search per tool call, and a call's `action` says what it did: only `search`
 * actions run queries (`open_page` and `find_in_page` read a page already found), so
 * `billedQueries` counts the search calls that did not fail. An endpoint billed per request is
 * charged one unit whatever this says (billing/search-units.ts).
 * @see https://platform.openai.com/docs/api-reference/responses
 */
import type { WebSearchInfo } from '../../canonical/index.ts';
import type { ResponsesOutputItemWire } from './wire.ts';

/** Undefined when the model made no web search call at all. */
export function responsesWebSearch(items: readonly ResponsesOutputItemWire[]): WebSearchInfo | undefined {
  const calls = items.filter((item) => item.type === 'web_search_call');
  if (calls.length === 0) return undefined;
  const searches = calls.filter((call) => call.action?.type === 'search' && call.status !== 'failed');
  const queries = searches.flatMap(({ action }) => (action?.queries?.length ? action.queries : action?.query ? [action.query] : []));
  return { queries, billedQueries: searches.length };
}
