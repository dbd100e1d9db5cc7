/** Anthropic `stop_reason` → canonical (docs/protocols.md), the raw value kept beside it. */
import type { Finish } from '../../canonical/index.ts';
import type { AnthropicStopDetailsWire } from './wire.ts';
import { finishFromTable, finishTable } from '../finish-table.ts';

// `pause_turn` (the API paused a long web-search turn) is left to the table's default, stop: the
// answer ends where it paused, as the gateway does not resume the turn (a client may ask again).
const STOP_REASONS = finishTable({
  stop: ['end_turn', 'stop_sequence'],
  length: ['max_tokens', 'model_context_window_exceeded'],
  tool_calls: ['tool_use'],
  content_filter: ['refusal'],
});

/** The stop of a message or a `message_delta`: its reason, matched sequence and refusal details. */
export interface AnthropicStop {
  readonly stop_reason?: string | null;
  readonly stop_sequence?: string | null;
  readonly stop_details?: AnthropicStopDetailsWire | null;
}

export function anthropicFinish(stop: AnthropicStop | undefined): Finish {
  const raw = stop?.stop_reason;
  const finish = finishFromTable(STOP_REASONS, raw);
  if (raw === 'stop_sequence' && typeof stop?.stop_sequence === 'string') return { ...finish, stopSequence: stop.stop_sequence };
  const details = stop?.stop_details;
  if (raw === 'refusal' && details?.type === 'refusal') {
    return { ...finish, refusal: { category: details.category ?? null, explanation: details.explanation ?? null } };
  }
  return finish;
}
