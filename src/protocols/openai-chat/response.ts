/**
 * A Chat Completions response body → canonical result.
 * @see https://platform.openai.com/docs/api-reference/chat
 */
import type { AssistantContentPart, CanonicalResult, Citation } from '../../canonical/index.ts';
import { providerIdentity } from '../provider-identity.ts';
import { errors } from '../../core/errors.ts';
import { checkedBody, wireCheck } from '../wire-schema.ts';
import { chatStreamError } from './errors.ts';
import { chatFinish } from './finish.ts';
import { chatLogprobs } from './logprobs.ts';
import { chatUsage } from './usage.ts';
import { ChatCompletionSchema, type ChatAnnotationWire } from './wire.ts';

const checkCompletion = wireCheck(ChatCompletionSchema, 'a chat completion');

export function parseChatResponse(body: unknown): CanonicalResult {
  const wire = checkedBody(checkCompletion, body);
  // Some compatible servers answer 200 with an error envelope.
  if (wire?.error !== undefined && wire.error !== null) throw chatStreamError(wire.error);
  const choice = wire?.choices?.[0];
  if (choice === undefined) throw errors.malformedUpstream('a chat completion without choices');
  const message = choice.message ?? {};
  const content: AssistantContentPart[] = [];
  // Compatible servers (vLLM, DeepSeek) return the reasoning text beside the answer.
  const reasoning = message.reasoning_content ?? message.reasoning;
  if (reasoning) content.push({ type: 'reasoning', text: reasoning });
  const text = message.content ?? message.refusal;
  if (text) content.push({ type: 'text', text });
  for (const [position, call] of (message.tool_calls ?? []).entries()) {
    content.push({
      type: 'tool_call',
      id: call.id ?? `call_${position}`,
      name: call.function?.name ?? '',
      arguments: call.function?.arguments ?? '',
      ...(call.extra_content != null && { extraContent: call.extra_content }),
    });
  }
  const citations = chatCitations(message.annotations);
  const logprobs = chatLogprobs(choice.logprobs);
  return {
    ...providerIdentity(wire.id, wire.model),
    content,
    finish: chatFinish(choice.finish_reason),
    usage: chatUsage(wire.usage),
    ...(wire.usage != null && { providerUsage: wire.usage }),
    ...(citations.length > 0 && { citations }),
    ...(logprobs !== undefined && { logprobs }),
  };
}

export function chatCitations(annotations: readonly ChatAnnotationWire[] | null | undefined): Citation[] {
  const citations: Citation[] = [];
  for (const annotation of annotations ?? []) {
    const cite = annotation.url_citation;
    if (annotation.type !== 'url_citation' || cite?.url == null) continue;
    citations.push({
      url: cite.url,
      ...(cite.title != null && { title: cite.title }),
      ...(cite.start_index != null && { startIndex: cite.start_index }),
      ...(cite.end_index != null && { endIndex: cite.end_index }),
    });
  }
  return citations;
}
