/**
 * Gemini `streamGenerateContent?alt=sse` → canonical stream events (docs/protocols.md,
 * "Streaming").
 *
 * Each data-only chunk is a partial GenerateContentResponse. Text and thought text arrive in pieces:
 * a canonical part opens with the first piece of its kind and closes when another kind starts or the
 * candidate finishes. A function call arrives whole, so its start, one delta and its end are emitted
 * together. `usageMetadata` is a running total (each one replaces the last). The finish reason comes
 * on the last chunk, but the canonical finish waits for the body's end, since a usage-only chunk may
 * still follow; a body that ends without a finish reason was cut short and ends in an error.
 * @see https://ai.google.dev/api/generate-content
 */
import type { Citation, Finish, StreamEvent } from '../../canonical/index.ts';
import { errors, type GatewayError } from '../../core/errors.ts';
import type { StreamDecoder } from '../protocol.ts';
import { providerIdentity } from '../provider-identity.ts';
import { parseEventJson } from '../transport/sse.ts';
import { geminiStreamError } from './errors.ts';
import { blockedPromptFinish, geminiFinish } from './finish.ts';
import { geminiCitations, geminiWebSearch } from './grounding.ts';
import { geminiSignature, synthesizedCallId } from './signatures.ts';
import { geminiUsage } from './usage.ts';
import { GeminiResponseSchema, type GeminiCandidateWire, type GeminiGroundingMetadataWire, type GeminiPartWire } from './wire.ts';
import { wireCheck } from '../wire-schema.ts';

const checkChunk = wireCheck(GeminiResponseSchema, 'a response chunk');

type OpenPart = { readonly kind: 'text' | 'reasoning'; readonly index: number; signature?: string };

export function createGeminiStreamDecoder(): StreamDecoder {
  let started = false;
  let finished = false;
  let nextIndex = 0;
  let open: OpenPart | undefined;
  let calls = 0;
  /** The answer text so far: grounding segments are positions in it. */
  let answer = '';
  let grounding: GeminiGroundingMetadataWire | undefined;
  let pendingFinish: Finish | undefined;

  const fail = (error: GatewayError): StreamEvent[] => {
    finished = true;
    return [{ type: 'error', error }];
  };

  const closeOpen = (events: StreamEvent[]) => {
    if (open === undefined) return;
    if (open.kind === 'reasoning') {
      const signature = geminiSignature(open.signature);
      events.push({ type: 'reasoning-end', index: open.index, ...(signature && { signature }) });
    } else {
      const citations: Citation[] = grounding ? geminiCitations(grounding, answer) : [];
      events.push({ type: 'text-end', index: open.index, ...(citations.length > 0 && { citations }) });
    }
    open = undefined;
  };

  const appendText = (kind: OpenPart['kind'], part: GeminiPartWire, events: StreamEvent[]) => {
    const text = part.text ?? '';
    // A thought signature may come on an empty part; on a plain text part it is not kept (see response.ts).
    if (text === '' && !(kind === 'reasoning' && part.thoughtSignature)) return;
    if (open?.kind !== kind) {
      closeOpen(events);
      open = { kind, index: nextIndex++ };
      events.push(kind === 'text' ? { type: 'text-start', index: open.index } : { type: 'reasoning-start', index: open.index });
    }
    if (kind === 'reasoning' && part.thoughtSignature) open.signature = part.thoughtSignature;
    if (text === '') return;
    if (kind === 'text') answer += text;
    events.push(kind === 'text' ? { type: 'text-delta', index: open.index, text } : { type: 'reasoning-delta', index: open.index, text });
  };

  const functionCall = (part: GeminiPartWire, events: StreamEvent[]) => {
    closeOpen(events);
    const call = part.functionCall ?? {};
    const name = call.name ?? '';
    const position = calls++;
    const index = nextIndex++;
    const signature = geminiSignature(part.thoughtSignature);
    events.push(
      { type: 'tool-call-start', index, id: call.id ?? synthesizedCallId(position, name), name, ...(signature && { signature }) },
      { type: 'tool-call-delta', index, argumentsDelta: JSON.stringify(call.args ?? {}) },
      { type: 'tool-call-end', index },
    );
  };

  const candidateEvents = (candidate: GeminiCandidateWire, events: StreamEvent[]) => {
    for (const part of candidate.content?.parts ?? []) {
      if (part.functionCall) functionCall(part, events);
      else appendText(part.thought === true ? 'reasoning' : 'text', part, events);
    }
    if (candidate.groundingMetadata) grounding = candidate.groundingMetadata;
    if (candidate.finishReason) {
      closeOpen(events);
      pendingFinish = geminiFinish(candidate.finishReason, calls > 0);
      if (grounding) events.push({ type: 'web-search', webSearch: geminiWebSearch(grounding) });
    }
  };

  return {
    push(message) {
      if (finished) return [];
      const parsed = parseEventJson(message.data);
      if (!parsed.ok) return fail(parsed.error);
      // An error chunk is read as it comes, whatever its shape (errors.ts checks each field it uses).
      const error = (parsed.value as { error?: unknown } | null)?.error;
      if (error !== undefined) return fail(geminiStreamError(error));
      const checked = checkChunk(parsed.value);
      if (!checked.ok) return fail(checked.error);
      const chunk = checked.value;
      const events: StreamEvent[] = [];
      if (!started) {
        started = true;
        events.push({ type: 'start', ...providerIdentity(chunk.responseId, chunk.modelVersion) });
      }
      const candidate = chunk.candidates?.[0];
      if (candidate !== undefined && pendingFinish === undefined) candidateEvents(candidate, events);
      const blockReason = chunk.promptFeedback?.blockReason;
      if (blockReason && pendingFinish === undefined && candidate === undefined) pendingFinish = blockedPromptFinish(blockReason);
      if (chunk.usageMetadata) events.push({ type: 'usage', usage: geminiUsage(chunk.usageMetadata), reported: chunk.usageMetadata });
      return events;
    },
    end() {
      if (finished) return [];
      if (pendingFinish === undefined) return fail(errors.malformedUpstream('a stream that ended before its finish reason'));
      finished = true;
      return [{ type: 'finish', finish: pendingFinish }];
    },
  };
}
