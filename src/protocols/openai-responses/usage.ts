/**
 * Responses usage → canonical (docs/protocols.md). `input_tokens` includes the cached and
 * cache-write tokens, `output_tokens` includes the reasoning tokens.
 */
import { ZERO_USAGE, type Usage } from '../../canonical/index.ts';
import { openAIUsage } from '../openai-usage.ts';
import type { ResponsesUsageWire } from './wire.ts';

export function responsesUsage(wire: ResponsesUsageWire | null | undefined): Usage {
  if (wire === null || wire === undefined) return ZERO_USAGE;
  return openAIUsage({
    input: wire.input_tokens,
    inputDetails: wire.input_tokens_details,
    output: wire.output_tokens,
    outputDetails: wire.output_tokens_details,
  });
}
