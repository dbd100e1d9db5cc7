/**
 * Reasoning items through the canonical model, as opaque OpenAI-family data (docs/protocols.md:
 * sent back unchanged to the same family only).
 *
 * - A canonical reasoning part carries its item's `rs_` id and, when present, its
 *   `encrypted_content`, so that a later turn can pass it back.
 * - A chat client replays only its tool calls (with their `extra_content`), never reasoning, so the
 *   reasoning items that precede a function call also travel, whole, as that call's signature; when
 *   the conversation comes back without replayable reasoning parts, they are rebuilt from it right
 *   before the function call. Without them a reasoning model would continue the tool loop without
 *   the reasoning that made the call (and, when nothing is stored upstream, could not refer to it
 *   at all: hence `include: ["reasoning.encrypted_content"]`, see request.ts).
 */
import type { OpaqueProviderData } from '../../canonical/index.ts';
import type { ResponsesContentWire, ResponsesOutputItemWire, ResponsesReasoningInput } from './wire.ts';

export interface ReasoningItemReference {
  readonly id: string;
  readonly encrypted_content?: string;
}

export function reasoningSignature(id: string | null | undefined, encrypted: string | null | undefined): OpaqueProviderData | undefined {
  if (id == null) return undefined;
  const reference: ReasoningItemReference = { id, ...(encrypted ? { encrypted_content: encrypted } : {}) };
  return { family: 'openai', value: JSON.stringify(reference) };
}

/** The item a signature came from; undefined for another family's signature or an unreadable one. */
export function reasoningReference(signature: OpaqueProviderData | undefined): ReasoningItemReference | undefined {
  if (signature?.family !== 'openai') return undefined;
  const parsed = parseJson(signature.value) as Partial<ReasoningItemReference> | undefined;
  return typeof parsed?.id === 'string'
    ? { id: parsed.id, ...(typeof parsed.encrypted_content === 'string' && { encrypted_content: parsed.encrypted_content }) }
    : undefined;
}

/**
 * Collects the completed reasoning items of one response, in order, and hands them to the next
 * function call as its signature (the calls after the first in a row carry none, as their
 * reasoning is already replayed before the first).
 */
export interface ReasoningCarrier {
  reasoningDone(item: ResponsesOutputItemWire): void;
  /** The signature of the function call that starts now; undefined when no reasoning preceded it. */
  toolCallSignature(): OpaqueProviderData | undefined;
}

export function reasoningCarrier(): ReasoningCarrier {
  let pending: ResponsesReasoningInput[] = [];
  return {
    reasoningDone(item) {
      if (item.id != null) pending.push(replayItem(item.id, item.summary, item.encrypted_content));
    },
    toolCallSignature() {
      const items = pending;
      pending = [];
      return items.length > 0 ? { family: 'openai', value: JSON.stringify(items) } : undefined;
    },
  };
}

/** The reasoning items a replayed tool call carries; none for another family's or an unreadable signature. */
export function reasoningOfToolCall(signature: OpaqueProviderData | undefined): ResponsesReasoningInput[] {
  if (signature?.family !== 'openai') return [];
  const parsed = parseJson(signature.value);
  if (!Array.isArray(parsed) || !parsed.every(isReasoningInput)) return [];
  return parsed.map((item) => replayItem(item.id, item.summary, item.encrypted_content));
}

/** The input item as the Responses API takes it back: only the fields it documents. */
function replayItem(id: string, summary: readonly ResponsesContentWire[] | null | undefined, encrypted: string | null | undefined): ResponsesReasoningInput {
  return {
    type: 'reasoning',
    id,
    summary: (summary ?? []).flatMap((part) => (part.type === 'summary_text' ? [{ type: 'summary_text' as const, text: part.text ?? '' }] : [])),
    ...(encrypted ? { encrypted_content: encrypted } : {}),
  };
}

function isReasoningInput(value: unknown): value is ResponsesReasoningInput {
  if (typeof value !== 'object' || value === null) return false;
  const item = value as Record<string, unknown>;
  return (
    item.type === 'reasoning' &&
    typeof item.id === 'string' &&
    Array.isArray(item.summary) &&
    item.summary.every((part: unknown) => typeof (part as { text?: unknown } | null)?.text === 'string') &&
    (item.encrypted_content === undefined || typeof item.encrypted_content === 'string')
  );
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
