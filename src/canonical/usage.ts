/**
 * Canonical token usage. Input is split into disjoint parts (uncached, cache read, cache write) so
 * that billing multiplies each by its own rate; every protocol normalises its provider's overlapping
 * counts into these (docs/protocols.md, "Usage"), and every dialect re-assembles its own totals.
 */
export interface Usage {
  /** Input tokens billed at the standard input rate (excludes cache reads and writes). */
  readonly inputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  /**
   * The part of cacheWriteTokens written with a 1-hour lifetime, which Anthropic bills above the
   * 5-minute rate; absent when the provider reports no split (every write then counts as 5-minute).
   */
  readonly cacheWrite1hTokens?: number;
  /** Output tokens, reasoning included. */
  readonly outputTokens: number;
  /** The part of outputTokens spent on reasoning (informational; billed as output). */
  readonly reasoningTokens: number;
}

export const ZERO_USAGE: Usage = {
  inputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
};

/** Total prompt size as the OpenAI formats report it: all input, cached or not. */
export function totalInputTokens(usage: Usage): number {
  return usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
}

/** The cache writes by lifetime, each billed at its own rate (docs/billing.md). */
export interface CacheWritesByLifetime {
  readonly fiveMinute: number;
  readonly oneHour: number;
}

/**
 * Splits cacheWriteTokens into its 5-minute and 1-hour parts. A 1-hour count outside 0..total (a
 * provider's inconsistency) is brought within it, so that neither part is ever negative.
 */
export function cacheWritesByLifetime(usage: Usage): CacheWritesByLifetime {
  const oneHour = Math.max(0, Math.min(usage.cacheWrite1hTokens ?? 0, usage.cacheWriteTokens));
  return { fiveMinute: usage.cacheWriteTokens - oneHour, oneHour };
}

/**
 * Web search metadata from a grounded or search-enabled response. `billedQueries` follows the
 * provider kind's rule: executed queries for some, one unit per successful search request for others.
 */
export interface WebSearchInfo {
  readonly queries: readonly string[];
  readonly searchEntryPointHtml?: string;
  readonly billedQueries: number;
}
