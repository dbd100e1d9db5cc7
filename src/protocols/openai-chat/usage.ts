/**
 * Chat usage → canonical (docs/protocols.md). `prompt_tokens` includes the cached tokens (and,
 * presumably, the newer `cache_write_tokens`), `completion_tokens` includes the reasoning tokens.
 */
import { ZERO_USAGE, type Usage } from '../../canonical/index.ts';
import { openAIUsage } from '../openai-usage.ts';
import type { ChatUsageWire } from './wire.ts';

export function chatUsage(wire: ChatUsageWire | null | undefined): Usage {
  if (wire === null || wire === undefined) return ZERO_USAGE;
  return openAIUsage({
    input: wire.prompt_tokens,
    inputDetails: wire.prompt_tokens_details,
    output: wire.completion_tokens,
    outputDetails: wire.completion_tokens_details,
  });
}
