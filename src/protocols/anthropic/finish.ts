/** Anthropic `stop_reason` → canonical (PROTOCOLS.md §9.6), the raw value kept beside it. */
import type { Finish } from '../../canonical/index.ts';

export function anthropicFinish(raw: string | null | undefined, stopSequence: string | null | undefined): Finish {
  switch (raw) {
    case 'end_turn':
      return { reason: 'stop', raw };
    case 'stop_sequence':
      return { reason: 'stop', raw, ...(typeof stopSequence === 'string' && { stopSequence }) };
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return { reason: 'length', raw };
    case 'tool_use':
      return { reason: 'tool_calls', raw };
    case 'refusal':
      return { reason: 'content_filter', raw };
    default:
      // `pause_turn` (a server-tool loop the gateway never starts) and values newer than this code:
      // the model stopped without an error, so the answer stands.
      return { reason: 'stop', raw: raw ?? null };
  }
}
