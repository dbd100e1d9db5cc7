/** Anthropic `stop_reason` → canonical (docs/protocols.md), the raw value kept beside it. */
import type { Finish } from '../../canonical/index.ts';
import { finishFromTable, finishTable } from '../finish-table.ts';

// `pause_turn` (the API paused a long web-search turn) is left to the table's default, stop: the
// answer ends where it paused, as the gateway does not resume the turn (a client may ask again).
const STOP_REASONS = finishTable({
  stop: ['end_turn', 'stop_sequence'],
  length: ['max_tokens', 'model_context_window_exceeded'],
  tool_calls: ['tool_use'],
  content_filter: ['refusal'],
});

export function anthropicFinish(raw: string | null | undefined, stopSequence: string | null | undefined): Finish {
  const finish = finishFromTable(STOP_REASONS, raw);
  return raw === 'stop_sequence' && typeof stopSequence === 'string' ? { ...finish, stopSequence } : finish;
}
