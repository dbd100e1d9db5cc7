/**
 * Chat usage → canonical (PROTOCOLS.md §9.7). `prompt_tokens` includes the cached tokens (and,
 * presumably, the newer `cache_write_tokens`), `completion_tokens` includes the reasoning tokens; the
 * canonical input parts are disjoint, so both cache counts come off the prompt total.
 */
import { ZERO_USAGE, type Usage } from '../../canonical/index.ts';
import type { ChatUsageWire } from './wire.ts';

export function chatUsage(wire: ChatUsageWire | null | undefined): Usage {
  if (wire === null || wire === undefined) return ZERO_USAGE;
  const prompt = wire.prompt_tokens ?? 0;
  const cacheRead = wire.prompt_tokens_details?.cached_tokens ?? 0;
  const cacheWrite = wire.prompt_tokens_details?.cache_write_tokens ?? 0;
  return {
    inputTokens: Math.max(0, prompt - cacheRead - cacheWrite),
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    outputTokens: wire.completion_tokens ?? 0,
    reasoningTokens: wire.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}
