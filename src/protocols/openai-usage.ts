/**
 * Usage as both OpenAI formats count it (docs/protocols.md), under their own field names: the input
 * total includes the cached and cache-write tokens, the output total includes the reasoning tokens.
 * The canonical input parts are disjoint, so both cache counts come off the input total.
 */
import type { Usage } from '../canonical/index.ts';

export interface OpenAIUsageCounts {
  readonly input: number | null | undefined;
  readonly inputDetails: { cached_tokens?: number | null; cache_write_tokens?: number | null } | null | undefined;
  readonly output: number | null | undefined;
  readonly outputDetails: { reasoning_tokens?: number | null } | null | undefined;
}

export function openAIUsage({ input, inputDetails, output, outputDetails }: OpenAIUsageCounts): Usage {
  const cacheRead = inputDetails?.cached_tokens ?? 0;
  const cacheWrite = inputDetails?.cache_write_tokens ?? 0;
  return {
    inputTokens: Math.max(0, (input ?? 0) - cacheRead - cacheWrite),
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    outputTokens: output ?? 0,
    reasoningTokens: outputDetails?.reasoning_tokens ?? 0,
  };
}
