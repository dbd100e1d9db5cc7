/**
 * Gemini `usageMetadata` → canonical (docs/protocols.md). `promptTokenCount` includes the cached
 * tokens, and tool-use prompt tokens (search results fed back to the model) are input billed at the
 * input rate ⚠; `candidatesTokenCount` excludes the thoughts, which are output all the same. There is
 * no per-request cache write: explicit caches are created and billed through another API. In a
 * stream the metadata is a running total: the last one is the whole.
 */
import type { Usage } from '../../canonical/index.ts';
import type { GeminiUsageWire } from './wire.ts';

export function geminiUsage(wire: GeminiUsageWire | null | undefined): Usage {
  const prompt = wire?.promptTokenCount ?? 0;
  const cached = wire?.cachedContentTokenCount ?? 0;
  const thoughts = wire?.thoughtsTokenCount ?? 0;
  return {
    inputTokens: Math.max(0, prompt - cached) + (wire?.toolUsePromptTokenCount ?? 0),
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
    outputTokens: (wire?.candidatesTokenCount ?? 0) + thoughts,
    reasoningTokens: thoughts,
  };
}
