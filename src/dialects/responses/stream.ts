/**
 * Canonical stream events → the Responses API's server-sent events, in the order the official
 * `openai` SDK's `responses.stream()` helper accumulates and checks (docs/responses.md,
 * "Streaming"): `response.created` and `response.in_progress` with the response shell; per output
 * item `response.output_item.added`, its part and deltas (`output_text`, `reasoning_summary_text`,
 * `function_call_arguments`), their `.done` events and `response.output_item.done`; then one
 * terminal `response.completed` or `response.incomplete` whose response holds every item and the
 * final usage with the charged `cost`. Every event has an increasing `sequence_number`. An error
 * after the stream started is one `error` event and the stream ends there (the SDK throws it).
 * @see https://platform.openai.com/docs/api-reference/responses-streaming
 */
import type { FastifyReply } from 'fastify';
import { ZERO_USAGE, type Citation, type OpaqueProviderData, type StreamEvent, type Usage } from '../../canonical/index.ts';
import { sendEventStream } from '../../http/event-stream.ts';
import type { StreamRun } from '../../pipeline/text-stream.ts';
import {
  chargedUsage,
  encodeUsage,
  functionCallItem,
  IN_PROGRESS,
  itemId,
  messageItem,
  outputText,
  reasoningItem,
  responseShell,
  terminalStatus,
  type ResponsesOutputItem,
  type TerminalStatus,
} from './encode.ts';
import { functionCallExtension, reasoningExtension, type FunctionCallExtension } from './provider-data.ts';

/** The terminal event of each status a finish leads to. */
const TERMINAL_EVENT: Record<TerminalStatus, string> = {
  completed: 'response.completed',
  incomplete: 'response.incomplete',
  failed: 'response.failed',
};

export function sendResponsesStream(reply: FastifyReply, run: StreamRun): Promise<void> {
  return sendEventStream(reply, run.events, responsesFrameEncoder(run));
}

/** An output item being streamed: what its `.done` events and its final form are built from. */
type OpenItem =
  | { readonly kind: 'message'; readonly outputIndex: number; readonly id: string; text: string }
  | { readonly kind: 'reasoning'; readonly outputIndex: number; readonly id: string; text: string; summaryStarted: boolean; signature?: OpaqueProviderData }
  | {
      readonly kind: 'function_call';
      readonly outputIndex: number;
      readonly id: string;
      readonly callId: string;
      readonly name: string;
      arguments: string;
      /** Known at the call's start; shown with the finished item, as OpenAI adds encrypted content only then. */
      readonly extension: FunctionCallExtension;
    };

/**
 * The frames of each canonical event, in order, with the stream's state in the closure (see the
 * chat dialect's stream.ts). Output items are numbered in the order they start; parts that overlap
 * in time (parallel tool calls) are separate items, each with its own `output_index`.
 */
export function responsesFrameEncoder(run: StreamRun): (event: StreamEvent) => string {
  const { call } = run;
  let sequence = 0;
  /** Canonical part index → its open item; removed when the item is done. */
  const open = new Map<number, OpenItem>();
  /** The items done, by output index, for the terminal response. */
  const done: ResponsesOutputItem[] = [];
  let nextOutputIndex = 0;
  let usage: Usage = ZERO_USAGE;

  const frame = (type: string, payload: Record<string, unknown>): string =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...payload })}\n\n`;

  const added = (item: ResponsesOutputItem): string => frame('response.output_item.added', { output_index: nextOutputIndex++, item });

  const openMessage = (part: number): string => {
    const item: OpenItem = { kind: 'message', outputIndex: nextOutputIndex, id: itemId('msg', call.requestId, part), text: '' };
    open.set(part, item);
    return (
      added({ ...messageItem(item.id, '', [], 'in_progress'), content: [] }) +
      frame('response.content_part.added', { item_id: item.id, output_index: item.outputIndex, content_index: 0, part: outputText('', []) })
    );
  };

  const openReasoning = (part: number): string => {
    const item: OpenItem = { kind: 'reasoning', outputIndex: nextOutputIndex, id: itemId('rs', call.requestId, part), text: '', summaryStarted: false };
    open.set(part, item);
    return added(reasoningItem(item.id, '', 'in_progress'));
  };

  /** The open item of a part, opened if its start was not seen. */
  const itemFor = <K extends 'message' | 'reasoning'>(part: number, kind: K): { frames: string; item: Extract<OpenItem, { kind: K }> | undefined } => {
    let frames = '';
    if (!open.has(part)) frames = kind === 'message' ? openMessage(part) : openReasoning(part);
    const item = open.get(part);
    return { frames, item: item?.kind === kind ? (item as Extract<OpenItem, { kind: K }>) : undefined };
  };

  const finishItem = (part: number, citations: readonly Citation[]): string => {
    const item = open.get(part);
    if (item === undefined) return '';
    open.delete(part);
    const at = { item_id: item.id, output_index: item.outputIndex };
    let frames = '';
    let final: ResponsesOutputItem;
    switch (item.kind) {
      case 'message': {
        const text = outputText(item.text, citations);
        text.annotations.forEach((annotation, annotation_index) => {
          frames += frame('response.output_text.annotation.added', { ...at, content_index: 0, annotation_index, annotation });
        });
        frames += frame('response.output_text.done', { ...at, content_index: 0, text: item.text, logprobs: [] });
        frames += frame('response.content_part.done', { ...at, content_index: 0, part: text });
        final = messageItem(item.id, item.text, citations, 'completed');
        break;
      }
      case 'reasoning':
        if (item.summaryStarted) {
          frames += frame('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: item.text });
          frames += frame('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: { type: 'summary_text', text: item.text } });
        }
        final = { ...reasoningItem(item.id, item.text, 'completed'), ...reasoningExtension(item.signature) };
        break;
      case 'function_call':
        frames += frame('response.function_call_arguments.done', { ...at, name: item.name, arguments: item.arguments });
        final = { ...functionCallItem(item.id, item.callId, item.name, item.arguments, 'completed'), ...item.extension };
        break;
      default: {
        const unreachable: never = item;
        return unreachable;
      }
    }
    done[item.outputIndex] = final;
    return frames + frame('response.output_item.done', { output_index: item.outputIndex, item: final });
  };

  return (event) => {
    switch (event.type) {
      case 'start': {
        const response = responseShell(call, IN_PROGRESS);
        return frame('response.created', { response }) + frame('response.in_progress', { response });
      }
      case 'text-start':
        return openMessage(event.index);
      case 'text-delta': {
        if (!event.text) return '';
        const { frames, item } = itemFor(event.index, 'message');
        if (item === undefined) return frames;
        item.text += event.text;
        return (
          frames + frame('response.output_text.delta', { item_id: item.id, output_index: item.outputIndex, content_index: 0, delta: event.text, logprobs: [] })
        );
      }
      case 'text-end':
        return finishItem(event.index, event.citations ?? []);
      case 'reasoning-start':
        return openReasoning(event.index);
      case 'reasoning-delta': {
        if (!event.text) return '';
        const { frames: opened, item } = itemFor(event.index, 'reasoning');
        if (item === undefined) return opened;
        const at = { item_id: item.id, output_index: item.outputIndex, summary_index: 0 };
        let frames = opened;
        if (!item.summaryStarted) {
          item.summaryStarted = true;
          frames += frame('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
        }
        item.text += event.text;
        return frames + frame('response.reasoning_summary_text.delta', { ...at, delta: event.text });
      }
      case 'reasoning-end': {
        const item = open.get(event.index);
        if (item?.kind === 'reasoning' && event.signature) item.signature = event.signature;
        return finishItem(event.index, []);
      }
      case 'tool-call-end':
        return finishItem(event.index, []);
      case 'tool-call-start': {
        const item: OpenItem = {
          kind: 'function_call',
          outputIndex: nextOutputIndex,
          id: itemId('fc', call.requestId, event.index),
          callId: event.id,
          name: event.name,
          arguments: '',
          extension: functionCallExtension(event),
        };
        open.set(event.index, item);
        return added(functionCallItem(item.id, item.callId, item.name, '', 'in_progress'));
      }
      case 'tool-call-delta': {
        const item = open.get(event.index);
        if (item?.kind !== 'function_call' || !event.argumentsDelta) return '';
        item.arguments += event.argumentsDelta;
        return frame('response.function_call_arguments.delta', { item_id: item.id, output_index: item.outputIndex, delta: event.argumentsDelta });
      }
      case 'usage':
        usage = event.usage;
        return '';
      case 'finish': {
        let frames = '';
        for (const part of [...open.keys()]) frames += finishItem(part, []);
        // The pipeline settles before it hands out the terminal event, so the charge is known here;
        // without it (the ledger was unreachable) the usage goes out without a cost.
        const settlement = run.settlement;
        const status = terminalStatus(event.finish);
        const response = {
          ...responseShell(call, status),
          output: done.filter((item) => item !== undefined),
          usage: settlement ? chargedUsage(settlement) : encodeUsage(usage),
        };
        return frames + frame(TERMINAL_EVENT[status.status], { response });
      }
      case 'error': {
        const { code, message, param } = event.error.toEnvelope().error;
        return frame('error', { code, message, param });
      }
      case 'web-search':
        // Server-side web search is not offered on this endpoint (docs/responses.md).
        return '';
      default: {
        const unreachable: never = event;
        return unreachable;
      }
    }
  };
}
