/**
 * CanonicalResult → the Message object of the Messages API, in the shape the official Anthropic
 * SDK types (docs/messages.md, "The Message"), whichever upstream protocol served it. Usage
 * carries the charged `cost` as chat's does.
 * @see https://docs.anthropic.com/en/api/messages
 */
import type { AssistantContentPart, CanonicalResult, Finish, ReasoningPart, ToolCallPart, Usage } from '../../canonical/index.ts';
import { formatUsd } from '../../core/money.ts';
import type { TextCall, TextSettlement } from '../../pipeline/kinds/text.ts';
import { signatureText, toolCallDataText } from './opaque-data.ts';

export type MessagesStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

/**
 * No `citations`: the only source of canonical citations is web search, which this endpoint does
 * not offer. The field is left out, as the API leaves it out of a block without citations; a `null`
 * there fails clients that read it as an optional array (the AI SDK's Anthropic provider).
 */
export interface MessagesTextBlock {
  type: 'text';
  text: string;
}

export interface MessagesToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  /** The arguments object; the text as produced when an upstream's arguments are not a JSON object. */
  input: unknown;
}

export interface MessagesThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface MessagesRedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

export type MessagesContentBlock = MessagesTextBlock | MessagesToolUseBlock | MessagesThinkingBlock | MessagesRedactedThinkingBlock;

export interface MessagesUsage {
  /** Input tokens neither read from nor written to the cache, as Anthropic counts them. */
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

/** The usage of a settled call: with the exact USD amount charged, as a decimal string. */
export type MessagesChargedUsage = MessagesUsage & { cost: string };

export interface MessageResult {
  id: string;
  type: 'message';
  role: 'assistant';
  /** The public id of the model that served the request. */
  model: string;
  content: MessagesContentBlock[];
  /** null only in the stored output of a stream that did not finish. */
  stop_reason: MessagesStopReason | null;
  stop_sequence: string | null;
  stop_details: MessagesStopDetails | null;
  usage: MessagesChargedUsage;
}

/** Why a `refusal` stopped the answer, when the provider said. */
export interface MessagesStopDetails {
  type: 'refusal';
  category: string | null;
  explanation: string | null;
}

/** `msg_` + the gateway request id, so the id a client logs leads to the stored request. */
export function messageId(requestId: string): string {
  return `msg_${requestId.replace(/^req_/, '')}`;
}

export function encodeMessage(result: CanonicalResult, call: TextCall, settlement: TextSettlement): MessageResult {
  return {
    id: messageId(call.requestId),
    type: 'message',
    role: 'assistant',
    model: call.modelId,
    content: result.content.flatMap(encodeBlocks),
    ...encodeStop(result.finish),
    usage: chargedUsage(settlement),
  };
}

/** A part's blocks: a tool call with data the Messages format has no field for is preceded by its carrier (opaque-data.ts). */
function encodeBlocks(part: AssistantContentPart): MessagesContentBlock[] {
  switch (part.type) {
    case 'text':
      return [{ type: 'text', text: part.text }];
    case 'tool_call': {
      const carried = toolCallDataText(part);
      const call: MessagesToolUseBlock = { type: 'tool_use', id: part.id, name: part.name, input: toolInput(part) };
      return carried === undefined ? [call] : [{ type: 'redacted_thinking', data: carried }, call];
    }
    case 'reasoning':
      return [part.redacted === true ? { type: 'redacted_thinking', data: signatureText(part.signature) } : thinkingBlock(part)];
    default: {
      const unreachable: never = part;
      return unreachable;
    }
  }
}

function thinkingBlock(part: ReasoningPart): MessagesThinkingBlock {
  return { type: 'thinking', thinking: part.text, signature: signatureText(part.signature) };
}

export function toolInput(part: Pick<ToolCallPart, 'arguments'>): unknown {
  try {
    const parsed: unknown = JSON.parse(part.arguments);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed;
  } catch {
    // Not JSON: kept as text below.
  }
  return part.arguments;
}

/**
 * The canonical finish in Messages terms. Anthropic's own reasons come back from `Finish.raw`
 * (`pause_turn`, `model_context_window_exceeded`), a matched stop sequence from `Finish.stopSequence`; a content filter of any
 * provider is a `refusal`. `error` never reaches a client as a stop reason (the pipeline sends an
 * error instead), so it is null.
 */
export function encodeStop(finish: Finish): { stop_reason: MessagesStopReason | null; stop_sequence: string | null; stop_details: MessagesStopDetails | null } {
  const stopSequence = finish.stopSequence ?? null;
  const details = finish.refusal === undefined ? null : { type: 'refusal' as const, ...finish.refusal };
  return { stop_reason: stopReason(finish, stopSequence !== null), stop_sequence: stopSequence, stop_details: details };
}

function stopReason(finish: Finish, matchedSequence: boolean): MessagesStopReason | null {
  switch (finish.reason) {
    case 'stop':
      if (matchedSequence) return 'stop_sequence';
      return finish.raw === 'pause_turn' ? 'pause_turn' : 'end_turn';
    case 'length':
      return finish.raw === 'model_context_window_exceeded' ? 'model_context_window_exceeded' : 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    case 'error':
      return null;
    default: {
      const unreachable: never = finish.reason;
      return unreachable;
    }
  }
}

/**
 * Canonical usage splits input as Anthropic does (uncached, cache read, cache write), so the counts
 * map one to one; writes not reported as 1-hour ones are 5-minute writes.
 */
export function encodeUsage(usage: Usage): MessagesUsage {
  const oneHour = usage.cacheWrite1hTokens ?? 0;
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_creation_input_tokens: usage.cacheWriteTokens,
    cache_read_input_tokens: usage.cacheReadTokens,
    cache_creation: { ephemeral_5m_input_tokens: usage.cacheWriteTokens - oneHour, ephemeral_1h_input_tokens: oneHour },
  };
}

export function chargedUsage(settlement: TextSettlement): MessagesChargedUsage {
  return { ...encodeUsage(settlement.usage), cost: formatUsd(settlement.charged) };
}
