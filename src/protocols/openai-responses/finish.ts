/**
 * A terminal response status → canonical finish (docs/protocols.md). Responses has no finish reason
 * of its own: `completed` with function calls means tool calls, `incomplete` says why in
 * `incomplete_details.reason`, which is kept as the raw value.
 */
import type { Finish } from '../../canonical/index.ts';
import { finishFromTable, finishTable } from '../finish-table.ts';
import type { ResponseObjectWire } from './wire.ts';

const INCOMPLETE_REASONS = finishTable({ length: ['max_output_tokens'], content_filter: ['content_filter'] });

export interface OutputSummary {
  readonly toolCalls: boolean;
  /** A `refusal` content part was produced (a refusal is a content-filter finish). */
  readonly refusal: boolean;
}

export function responsesFinish(response: ResponseObjectWire, output: OutputSummary): Finish {
  if (response.status === 'incomplete') return finishFromTable(INCOMPLETE_REASONS, response.incomplete_details?.reason ?? 'incomplete');
  if (output.refusal) return { reason: 'content_filter', raw: 'refusal' };
  return { reason: output.toolCalls ? 'tool_calls' : 'stop', raw: response.status ?? null };
}
