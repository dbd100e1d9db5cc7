/**
 * Anthropic's server-side web search (`web_search_20250305`) ⇄ canonical web search.
 *
 * The API runs the searches inside the turn: each is a `server_tool_use` block (name `web_search`,
 * input `{query}`) answered by a `web_search_tool_result` block whose content is the list of results,
 * or an error object when the search did not run (max_uses exceeded, rate limited, query too long…).
 * The queries reported are those whose search ran. `billedQueries` is the API's own count,
 * `usage.server_tool_use.web_search_requests` (a failed search is not billed); without one it is
 * the number of searches that ran, the same rule.
 *
 * The results themselves are not kept: what the answer drew on arrives as citations on its text
 * blocks, and their encrypted contents only serve a later Anthropic turn, which a chat client cannot
 * replay.
 */
import type { WebSearchInfo } from '../../canonical/index.ts';
import { WORST_CASE_SEARCH_QUERIES } from '../../catalog/request-bounds.ts';
import type { AnthropicContentBlockWire, AnthropicUsageWire, AnthropicWebSearchTool } from './wire.ts';

/**
 * The tool sent for a search-enabled request. A per-query route reserves credit for at most
 * WORST_CASE_SEARCH_QUERIES executed queries; `max_uses` keeps the API within that bound, as
 * `max_tokens` does for output (a search beyond it is answered with `max_uses_exceeded`, unbilled).
 * A fresh object each time: the cache option may add a breakpoint to it.
 */
export function anthropicWebSearchTool(): AnthropicWebSearchTool {
  return { type: 'web_search_20250305', name: 'web_search', max_uses: WORST_CASE_SEARCH_QUERIES };
}

/** The searches of one response, fed block by block (whole blocks, or streamed ones once complete). */
export class WebSearchTally {
  /** The query of each search call not answered yet, by call id. */
  readonly #pending = new Map<string, string>();
  readonly #queries: string[] = [];
  #billed: number | undefined;

  /**
   * A whole block (a streamed one once complete); only search calls and their results count.
   * Returns true when the block is the result of a search that ran.
   */
  block(block: AnthropicContentBlockWire): boolean {
    if (block.type === 'server_tool_use' && block.name === 'web_search' && block.id != null) {
      const input = block.input;
      const query = typeof input === 'object' && input !== null ? (input as { query?: unknown }).query : undefined;
      if (typeof query === 'string') this.#pending.set(block.id, query);
      return false;
    }
    // A list of results, even an empty one, means the search ran; an error object that it did not.
    const query = block.type === 'web_search_tool_result' ? this.#pending.get(block.tool_use_id ?? '') : undefined;
    if (query === undefined || !Array.isArray(block.content)) return false;
    this.#queries.push(query);
    return true;
  }

  /** A final usage: the count the API bills. */
  usage(wire: AnthropicUsageWire | null | undefined): void {
    const billed = wire?.server_tool_use?.web_search_requests;
    if (typeof billed === 'number') this.#billed = billed;
  }

  /** Undefined while nothing was searched or billed. */
  info(): WebSearchInfo | undefined {
    if (this.#queries.length === 0 && this.#billed === undefined) return undefined;
    return { queries: [...this.#queries], billedQueries: this.#billed ?? this.#queries.length };
  }
}
