/**
 * A terminal response status → canonical finish (PROTOCOLS.md §9.6). Responses has no finish reason
 * of its own: `completed` with function calls means tool calls, `incomplete` says why in
 * `incomplete_details.reason`, which is kept as the raw value.
 */
import type { Finish } from '../../canonical/index.ts';
import type { ResponseObjectWire } from './wire.ts';

export interface OutputSummary {
  readonly toolCalls: boolean;
  /** A `refusal` content part was produced (§9.6: a refusal is a content-filter finish). */
  readonly refusal: boolean;
}

export function responsesFinish(response: ResponseObjectWire, output: OutputSummary): Finish {
  if (response.status === 'incomplete') {
    const reason = response.incomplete_details?.reason ?? 'incomplete';
    switch (reason) {
      case 'max_output_tokens':
        return { reason: 'length', raw: reason };
      case 'content_filter':
        return { reason: 'content_filter', raw: reason };
      default:
        return { reason: 'stop', raw: reason };
    }
  }
  if (output.refusal) return { reason: 'content_filter', raw: 'refusal' };
  return { reason: output.toolCalls ? 'tool_calls' : 'stop', raw: response.status ?? null };
}
