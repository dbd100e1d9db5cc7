/**
 * CanonicalResult → the Response object of the OpenAI Responses API, in the shape the official
 * `openai` SDK types (`resources/responses`, `Response`), whichever upstream protocol served it
 * (docs/responses.md, "The Response object"). Usage carries the charged `cost` as chat's does.
 * `output_text` is not sent: the SDK computes it from `output`.
 * @see https://platform.openai.com/docs/api-reference/responses/object
 */
import type { AssistantContentPart, CanonicalRequest, CanonicalResult, Citation, Finish, ToolChoice, Usage } from '../../canonical/index.ts';
import { totalInputTokens } from '../../canonical/index.ts';
import { formatUsd } from '../../core/money.ts';
import type { TextCall, TextSettlement } from '../../pipeline/kinds/text.ts';
import { responseIdOf } from './response-id.ts';
import { functionCallExtension, reasoningExtension } from './provider-data.ts';

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface ResponsesUrlCitation {
  type: 'url_citation';
  url: string;
  title: string;
  start_index: number;
  end_index: number;
}

export interface ResponsesOutputText {
  type: 'output_text';
  text: string;
  annotations: ResponsesUrlCitation[];
}

export interface ResponsesMessageItem {
  type: 'message';
  id: string;
  role: 'assistant';
  status: ItemStatus;
  content: ResponsesOutputText[];
}

export interface ResponsesFunctionCallItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  /** The arguments' JSON text exactly as produced. */
  arguments: string;
  status: ItemStatus;
  /** The provider's data for this call, to be replayed (./provider-data.ts). */
  x_gateway?: { provider_data: string };
}

export interface ResponsesSummaryText {
  type: 'summary_text';
  text: string;
}

/** The upstream's reasoning text, where it gives one, as the item's summary; empty otherwise, as OpenAI sends it. */
export interface ResponsesReasoningItem {
  type: 'reasoning';
  id: string;
  summary: ResponsesSummaryText[];
  status: ItemStatus;
  /** The provider's signature of this reasoning, packed, to be replayed (./provider-data.ts). */
  encrypted_content?: string;
}

export type ResponsesOutputItem = ResponsesMessageItem | ResponsesFunctionCallItem | ResponsesReasoningItem;

export interface ResponsesUsage {
  /** Every input token, cached or not; the cache reads and writes are details of it. */
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  /** Every output token, reasoning included. */
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** The usage of a settled call: with the exact USD amount charged, as a decimal string. */
export type ResponsesChargedUsage = ResponsesUsage & { cost: string };

/**
 * A response's statuses: `failed` is also an interrupted stream's stored object; `queued` and
 * `cancelled` belong to background responses only.
 */
export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'incomplete' | 'failed' | 'cancelled';

/** The statuses a response's result ends it in (a cancel is not a result). */
export type TerminalStatus = 'completed' | 'incomplete' | 'failed';

/** The status fields of a response; `error` and `incomplete_details` go with their status only. */
export type StatusFields<S extends ResponseStatus = ResponseStatus> = Pick<ResponseObject, 'error' | 'incomplete_details'> & { status: S };

export type IncompleteReason = 'max_output_tokens' | 'content_filter';

export type ResponsesToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; name: string };

export interface ResponsesFunctionTool {
  type: 'function';
  name: string;
  description: string | null;
  parameters: Record<string, unknown> | null;
  strict: boolean | null;
}

/** The request settings the SDK's `Response` type requires back, echoed from the canonical request. */
export interface ResponseSettings {
  instructions: string | null;
  metadata: Record<string, string>;
  parallel_tool_calls: boolean;
  temperature: number | null;
  top_p: number | null;
  max_output_tokens: number | null;
  tool_choice: ResponsesToolChoice;
  tools: ResponsesFunctionTool[];
  reasoning: { effort: string | null; summary: null };
  text: { format: { type: 'text' } };
  truncation: 'disabled';
  /** Whether the response was queued (`background: true`) rather than answered in its request. */
  background: boolean;
  previous_response_id: null;
  /** true: GET /v1/responses/{id} returns it for 24 hours (`store: false` in the request: it is not kept). */
  store: boolean;
  user?: string;
}

export interface ResponseObject extends ResponseSettings {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  /** The public id of the model that served the request. */
  model: string;
  /** Always an array: `[]` until the first item is added. */
  output: ResponsesOutputItem[];
  error: { code: string; message: string } | null;
  incomplete_details: { reason: IncompleteReason } | null;
  /** Absent only while the response is in progress. */
  usage?: ResponsesChargedUsage | ResponsesUsage;
}

export function encodeResponse(result: CanonicalResult, call: TextCall, settlement: TextSettlement): ResponseObject {
  // The result's citations belong to its text, which is one part in practice: they go on the last one.
  const cited = result.content.findLastIndex((part) => part.type === 'text');
  const output = result.content.map((part, index) => outputItem(call.requestId, index, part, index === cited ? (result.citations ?? []) : []));
  return { ...responseShell(call, terminalStatus(result.finish)), output, usage: chargedUsage(settlement) };
}

/**
 * A response without output or usage yet: what `response.created` carries, a queued background
 * response, and the base of every other.
 */
export function responseShell(call: Pick<TextCall, 'requestId' | 'createdAt' | 'modelId' | 'request'>, status: StatusFields): Omit<ResponseObject, 'usage'> {
  return {
    id: responseIdOf(call.requestId),
    object: 'response',
    created_at: Math.floor(call.createdAt / 1000),
    ...status,
    model: call.modelId,
    output: [],
    ...echoedSettings(call.request),
  };
}

export const IN_PROGRESS: StatusFields<'in_progress'> = { status: 'in_progress', error: null, incomplete_details: null };

/**
 * The finish in Responses terms: a length limit or a content filter leaves the response
 * `incomplete` with its reason; `error` is the stored object of a stream that failed after it
 * started (a client got an `error` event instead, stream.ts).
 */
export function terminalStatus(finish: Finish): StatusFields<TerminalStatus> {
  switch (finish.reason) {
    case 'stop':
    case 'tool_calls':
      return { status: 'completed', error: null, incomplete_details: null };
    case 'length':
      return { status: 'incomplete', error: null, incomplete_details: { reason: 'max_output_tokens' } };
    case 'content_filter':
      return { status: 'incomplete', error: null, incomplete_details: { reason: 'content_filter' } };
    case 'error':
      return {
        status: 'failed',
        error: { code: 'server_error', message: 'The upstream stream failed before the response was complete.' },
        incomplete_details: null,
      };
    default: {
      const unreachable: never = finish.reason;
      return unreachable;
    }
  }
}

/**
 * Item ids are the response's random part and the canonical part's index, so a streamed item and
 * the same item in the final object (and in the stored one) have one identity, which the SDK's
 * stream helper checks.
 */
export function itemId(prefix: 'msg' | 'fc' | 'rs', requestId: string, index: number): string {
  return `${prefix}_${responseIdOf(requestId).slice('resp_'.length)}_${index}`;
}

function outputItem(requestId: string, index: number, part: AssistantContentPart, citations: readonly Citation[]): ResponsesOutputItem {
  switch (part.type) {
    case 'text':
      return messageItem(itemId('msg', requestId, index), part.text, citations, 'completed');
    case 'tool_call':
      return { ...functionCallItem(itemId('fc', requestId, index), part.id, part.name, part.arguments, 'completed'), ...functionCallExtension(part) };
    case 'reasoning':
      return { ...reasoningItem(itemId('rs', requestId, index), part.text, 'completed'), ...reasoningExtension(part.signature) };
    default: {
      const unreachable: never = part;
      return unreachable;
    }
  }
}

export function messageItem(id: string, text: string, citations: readonly Citation[], status: ItemStatus): ResponsesMessageItem {
  return { type: 'message', id, role: 'assistant', status, content: [outputText(text, citations)] };
}

export function outputText(text: string, citations: readonly Citation[]): ResponsesOutputText {
  return { type: 'output_text', text, annotations: citations.map((citation) => encodeCitation(citation, text)) };
}

/** The API's url_citation has every field; a citation without a span covers the whole text. */
function encodeCitation(citation: Citation, text: string): ResponsesUrlCitation {
  return {
    type: 'url_citation',
    url: citation.url,
    title: citation.title ?? '',
    start_index: citation.startIndex ?? 0,
    end_index: citation.endIndex ?? text.length,
  };
}

export function functionCallItem(id: string, callId: string, name: string, args: string, status: ItemStatus): ResponsesFunctionCallItem {
  return { type: 'function_call', id, call_id: callId, name, arguments: args, status };
}

/** Redacted reasoning (no visible text) is an item with an empty summary. */
export function reasoningItem(id: string, text: string, status: ItemStatus): ResponsesReasoningItem {
  return { type: 'reasoning', id, summary: text === '' ? [] : [{ type: 'summary_text', text }], status };
}

/** docs/protocols.md: input_tokens counts every input token; the cached parts are details of it. */
export function encodeUsage(usage: Usage): ResponsesUsage {
  const input = totalInputTokens(usage);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cacheReadTokens, cache_write_tokens: usage.cacheWriteTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: input + usage.outputTokens,
  };
}

export function chargedUsage(settlement: TextSettlement): ResponsesChargedUsage {
  return { ...encodeUsage(settlement.usage), cost: formatUsd(settlement.charged) };
}

/**
 * What the request asked for, in the API's terms. `instructions` is the system text the model got
 * (the `instructions` field and any system or developer messages, in order, a blank line apart).
 */
function echoedSettings(request: CanonicalRequest): ResponseSettings {
  const system = request.system.map((block) => block.text).join('\n\n');
  return {
    instructions: system === '' ? null : system,
    metadata: { ...request.metadata },
    parallel_tool_calls: request.parallelToolCalls ?? true,
    temperature: request.temperature ?? null,
    top_p: request.topP ?? null,
    max_output_tokens: request.maxOutputTokens ?? null,
    tool_choice: encodeToolChoice(request.toolChoice),
    tools: (request.tools ?? []).map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description ?? null,
      parameters: tool.parameters ?? null,
      strict: tool.strict ?? null,
    })),
    reasoning: { effort: request.reasoning?.kind === 'effort' ? request.reasoning.effort : null, summary: null },
    text: { format: { type: 'text' } },
    truncation: 'disabled',
    background: false,
    previous_response_id: null,
    store: request.store !== false,
    ...(request.user === undefined ? {} : { user: request.user }),
  };
}

function encodeToolChoice(choice: ToolChoice | undefined): ResponsesToolChoice {
  if (choice === undefined) return 'auto';
  switch (choice.kind) {
    case 'auto':
    case 'none':
    case 'required':
      return choice.kind;
    case 'tool':
      return { type: 'function', name: choice.name };
    default: {
      const unreachable: never = choice;
      return unreachable;
    }
  }
}
