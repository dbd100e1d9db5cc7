/** Chat `finish_reason` → canonical (PROTOCOLS.md §9.6), the raw value kept beside it. */
import type { Finish } from '../../canonical/index.ts';

export function chatFinish(raw: string | null | undefined): Finish {
  switch (raw) {
    case 'length':
      return { reason: 'length', raw };
    case 'tool_calls':
    case 'function_call':
      return { reason: 'tool_calls', raw };
    case 'content_filter':
      return { reason: 'content_filter', raw };
    case 'stop':
      return { reason: 'stop', raw };
    default:
      // Compatible servers invent values (`eos`, `end_turn`); the model still stopped normally.
      return { reason: 'stop', raw: raw ?? null };
  }
}
