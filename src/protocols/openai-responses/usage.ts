/**
 * Responses usage → canonical (PROTOCOLS.md §9.7). `input_tokens` includes the cached and
 * cache-write tokens, `output_tokens` includes the reasoning tokens; canonical input parts are
 * disjoint, so both cache counts come off the input total.
 */
import { ZERO_USAGE, type Usage } from '../../canonical/index.ts';
import type { ResponsesUsageWire } from './wire.ts';

export function responsesUsage(wire: ResponsesUsageWire | null | undefined): Usage {
  if (wire === null || wire === undefined) return ZERO_USAGE;
  const input = wire.input_tokens ?? 0;
  const cacheRead = wire.input_tokens_details?.cached_tokens ?? 0;
  const cacheWrite = wire.input_tokens_details?.cache_write_tokens ?? 0;
  return {
    inputTokens: Math.max(0, input - cacheRead - cacheWrite),
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    outputTokens: wire.output_tokens ?? 0,
    reasoningTokens: wire.output_tokens_details?.reasoning_tokens ?? 0,
  };
}
