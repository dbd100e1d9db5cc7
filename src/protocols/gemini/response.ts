/**
 * A Gemini generateContent body → canonical result. Only the first
 * candidate is read (the gateway asks for one). Consecutive thought parts form one reasoning part
 * and consecutive text parts one text part, as the stream decoder builds them. A thought signature
 * is kept where Gemini checks it — on function calls, and on thought parts; one on a plain text part
 * is not kept (Gemini does not require it back, and no client format could carry it).
 * @see https://ai.google.dev/api/generate-content
 */
import { checkedBody, wireCheck } from '../wire-schema.ts';
import type { AssistantContentPart, CanonicalResult, Finish, ReasoningPart, TextPart } from '../../canonical/index.ts';
import { providerIdentity } from '../provider-identity.ts';
import { errors } from '../../core/errors.ts';
import { geminiStreamError } from './errors.ts';
import { blockedPromptFinish, geminiFinish } from './finish.ts';
import { geminiCitations, geminiWebSearch } from './grounding.ts';
import { geminiSignature, synthesizedCallId } from './signatures.ts';
import { geminiUsage } from './usage.ts';
import { GeminiResponseSchema, type GeminiPartWire, type GeminiResponseWire } from './wire.ts';

const checkResponse = wireCheck(GeminiResponseSchema, 'a response');

export function parseGeminiResponse(body: unknown): CanonicalResult {
  const wire = checkedBody(checkResponse, body);
  if (wire.error !== undefined) throw geminiStreamError(wire.error);
  const candidate = wire.candidates?.[0];
  const content = candidate === undefined ? [] : contentParts(candidate.content?.parts ?? []);
  const metadata = candidate?.groundingMetadata;
  const answer = content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  const citations = metadata ? geminiCitations(metadata, answer) : [];
  return {
    ...providerIdentity(wire.responseId, wire.modelVersion),
    content,
    finish: finishOf(wire, content),
    usage: geminiUsage(wire.usageMetadata),
    ...(wire.usageMetadata != null && { providerUsage: wire.usageMetadata }),
    ...(metadata && { webSearch: geminiWebSearch(metadata) }),
    ...(citations.length > 0 && { citations }),
  };
}

function finishOf(wire: GeminiResponseWire, content: readonly AssistantContentPart[]): Finish {
  const raw = wire.candidates?.[0]?.finishReason;
  if (raw)
    return geminiFinish(
      raw,
      content.some((part) => part.type === 'tool_call'),
    );
  const blockReason = wire.promptFeedback?.blockReason;
  if (blockReason) return blockedPromptFinish(blockReason);
  throw errors.malformedUpstream('a response without a finish reason');
}

function contentParts(parts: readonly GeminiPartWire[]): AssistantContentPart[] {
  const content: AssistantContentPart[] = [];
  let calls = 0;
  for (const part of parts) {
    const last = content.at(-1);
    if (part.functionCall) {
      const name = part.functionCall.name ?? '';
      const position = calls++;
      const signature = geminiSignature(part.thoughtSignature);
      content.push({
        type: 'tool_call',
        id: part.functionCall.id ?? synthesizedCallId(position, name),
        name,
        arguments: JSON.stringify(part.functionCall.args ?? {}),
        ...(signature && { signature }),
      });
    } else if (part.thought === true) {
      const previous = last?.type === 'reasoning' ? (content.pop() as ReasoningPart) : undefined;
      const signature = geminiSignature(part.thoughtSignature) ?? previous?.signature;
      content.push({ type: 'reasoning', text: (previous?.text ?? '') + (part.text ?? ''), ...(signature && { signature }) });
    } else if (part.text) {
      const previous = last?.type === 'text' ? (content.pop() as TextPart) : undefined;
      content.push({ type: 'text', text: (previous?.text ?? '') + part.text });
    }
  }
  return content;
}
