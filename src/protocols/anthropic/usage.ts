/**
 * Anthropic usage → canonical (docs/protocols.md). `input_tokens` already excludes both cache counts,
 * so the three input parts map one to one; `output_tokens` includes thinking, whose share only the
 * newer `output_tokens_details.thinking_tokens` reports (0 when absent: unknown, not billed apart).
 * `cache_creation` splits the cache writes by lifetime; its 1-hour part is billed at the route's
 * 1-hour rate, and without it every write counts as a 5-minute one.
 */
import type { Usage } from '../../canonical/index.ts';
import type { AnthropicUsageWire } from './wire.ts';

export function anthropicUsage(wire: AnthropicUsageWire | null | undefined): Usage {
  return {
    inputTokens: wire?.input_tokens ?? 0,
    cacheReadTokens: wire?.cache_read_input_tokens ?? 0,
    cacheWriteTokens: wire?.cache_creation_input_tokens ?? 0,
    ...oneHourWrites(wire?.cache_creation),
    outputTokens: wire?.output_tokens ?? 0,
    reasoningTokens: wire?.output_tokens_details?.thinking_tokens ?? 0,
  };
}

function oneHourWrites(split: AnthropicUsageWire['cache_creation']): Pick<Usage, 'cacheWrite1hTokens'> {
  const oneHour = split?.ephemeral_1h_input_tokens;
  return oneHour === undefined || oneHour === null ? {} : { cacheWrite1hTokens: oneHour };
}

/**
 * Folds a `message_delta` usage into the running one. The counts are cumulative: each present
 * field overwrites, and input or cache counts are copied only when present (what the official SDK
 * does), since a delta usually carries the output count alone; so is the lifetime split, which
 * only message_start carries.
 */
export function mergeAnthropicUsage(running: AnthropicUsageWire, delta: AnthropicUsageWire | null | undefined): AnthropicUsageWire {
  if (delta === null || delta === undefined) return running;
  const merged: AnthropicUsageWire = { ...running };
  for (const key of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
    const value = delta[key];
    if (value !== undefined && value !== null) merged[key] = value;
  }
  if (delta.cache_creation) merged.cache_creation = delta.cache_creation;
  if (delta.output_tokens_details) merged.output_tokens_details = delta.output_tokens_details;
  return merged;
}
