/** The simulated reply as a complete canonical result (reasoning first, then text, then tool calls). */
import type { AssistantContentPart, CanonicalResult, Usage } from '../../canonical/index.ts';
import type { SimulatedReply } from './request.ts';

export function simulatedResult(reply: SimulatedReply, usage: Usage, responseId: string, model: string): CanonicalResult {
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
  };
}
