/**
 * Usage as the simulated provider reports it, counted with the local tokenizer: the prompt by the
 * same estimate the gateway quotes with, the output from the text it produced.
 */
import type { CanonicalRequest, Usage } from '../../canonical/index.ts';
import type { RouteEndpoint } from '../../catalog/types.ts';
import { estimateMessagesTokens, estimatePromptTokens } from '../../tokens/estimate.ts';
import { countTextTokens } from '../../tokens/tokenizer.ts';
import type { SimulatedPromptCache } from './cache.ts';
import type { SimulatedReply } from './request.ts';

export function simulatedUsage(request: CanonicalRequest, endpoint: RouteEndpoint, reply: SimulatedReply, cache: SimulatedPromptCache): Usage {
  const promptTokens = estimatePromptTokens(request);
  let cacheReadTokens = 0;
  let cacheWriteTokens = 0;
  if (request.cache?.mode === 'on') {
    const prefix = request.messages.slice(0, -1);
    const prefixTokens = promptTokens - estimateMessagesTokens(request.messages.slice(-1));
    const key = { model: endpoint.upstreamModel, system: request.system, tools: request.tools ?? [], messages: prefix };
    ({ cacheReadTokens, cacheWriteTokens } = cache.lookup(key, prefixTokens, request.cache.ttl));
  }
  const reasoningTokens = countTextTokens(reply.reasoning ?? '');
  let outputTokens = reasoningTokens + countTextTokens(reply.text ?? '');
  for (const call of reply.toolCalls) outputTokens += countTextTokens(call.name) + countTextTokens(call.arguments);
  return {
    inputTokens: promptTokens - cacheReadTokens - cacheWriteTokens,
    cacheReadTokens,
    cacheWriteTokens,
    outputTokens,
    reasoningTokens,
  };
}
