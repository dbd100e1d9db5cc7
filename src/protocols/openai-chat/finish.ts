/**
 * Chat `finish_reason` → canonical (docs/protocols.md), the raw value kept beside it. Compatible
 * servers invent values (`eos`, `end_turn`); those fall to the table's default, stop.
 */
import type { Finish } from '../../canonical/index.ts';
import { finishFromTable, finishTable } from '../finish-table.ts';

const FINISH_REASONS = finishTable({
  stop: ['stop'],
  length: ['length'],
  tool_calls: ['tool_calls', 'function_call'],
  content_filter: ['content_filter'],
});

export function chatFinish(raw: string | null | undefined): Finish {
  return finishFromTable(FINISH_REASONS, raw);
}
