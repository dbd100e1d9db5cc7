/** The simulated reply as a complete canonical result (reasoning first, then text, then tool calls). */
import type { AssistantContentPart, CanonicalResult, Usage } from '../../canonical/index.ts';
import { simulatedLogprobs } from './logprobs.ts';
import type { SimulatedReply } from './request.ts';

/** `topLogprobs` is set when the request asked for logprobs. */
export function simulatedResult(reply: SimulatedReply, usage: Usage, responseId: string, model: string, topLogprobs?: number): CanonicalResult {
  const content: AssistantContentPart[] = [];
  if (reply.reasoning) content.push({ type: 'reasoning', text: reply.reasoning });
  if (reply.text !== undefined) content.push({ type: 'text', text: reply.text });
  content.push(...reply.toolCalls);
  return {
    providerResponseId: responseId,
    providerModel: model,
    content,
    finish: reply.finish,
    usage,
    ...(reply.webSearch ? { webSearch: reply.webSearch } : {}),
    ...(reply.citations ? { citations: reply.citations } : {}),
    ...(topLogprobs !== undefined && reply.text !== undefined ? { logprobs: simulatedLogprobs(reply.text, topLogprobs) } : {}),
  };
}
