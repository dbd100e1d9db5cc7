/**
 * The built-in `simulated` provider: a ChatProtocol with no upstream at all, so that a fresh
 * install answers its first request without credentials, and tests can run the whole pipeline
 * offline. Replies are deterministic functions of the request (see request.ts).
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CanonicalRequest } from '../../canonical/index.ts';
import type { RouteEndpoint } from '../../catalog/types.ts';
import type { ChatProtocol } from '../protocol.ts';
import { SimulatedPromptCache } from './cache.ts';
import { composeReply } from './request.ts';
import { simulatedResult } from './response.ts';
import { verifyReplayedSignatures } from './signature.ts';
import { DEFAULT_CHUNK_DELAY_MS, simulatedStream } from './stream.ts';
import { simulatedUsage } from './usage.ts';

export function createSimulatedProtocol(): ChatProtocol {
  const cache = new SimulatedPromptCache();
  const answer = (request: CanonicalRequest, endpoint: RouteEndpoint) => {
    verifyReplayedSignatures(request);
    const reply = composeReply(request, endpoint);
    const usage = simulatedUsage(request, endpoint, reply, cache);
    // Alternatives per token when logprobs were asked for.
    const topLogprobs = request.logprobs === true ? (request.topLogprobs ?? 0) : undefined;
    return { reply, usage, responseId: responseId(request, endpoint), topLogprobs };
  };
  return {
    // Every canonical parameter is accepted (and, where it has no effect on a simulation, ignored).
    unsupportedParameters: [],
    async complete(request, endpoint, context) {
      context.signal.throwIfAborted();
      await latency(endpoint, context.signal);
      const { reply, usage, responseId, topLogprobs } = answer(request, endpoint);
      return simulatedResult(reply, usage, responseId, endpoint.upstreamModel, topLogprobs);
    },
    async *stream(request, endpoint, context) {
      const { reply, usage, responseId, topLogprobs } = answer(request, endpoint);
      await latency(endpoint, context.signal);
      const delay = endpoint.provider.simulated?.chunk_delay_ms ?? DEFAULT_CHUNK_DELAY_MS;
      yield* simulatedStream(reply, usage, { responseId, model: endpoint.upstreamModel }, delay, context.signal, topLogprobs);
    },
  };
}

export const simulatedProtocol: ChatProtocol = createSimulatedProtocol();

/** The provider's `simulated.latency_ms` before an answer starts; an aborted call ends with its signal's reason. */
async function latency(endpoint: RouteEndpoint, signal: AbortSignal): Promise<void> {
  const delayMs = endpoint.provider.simulated?.latency_ms ?? 0;
  if (delayMs > 0) await sleep(delayMs, undefined, { signal }).catch(() => signal.throwIfAborted());
}

function responseId(request: CanonicalRequest, endpoint: RouteEndpoint): string {
  return `sim-${createHash('sha256')
    .update(`${endpoint.key}\n${request.messages.length}\n${JSON.stringify(request.messages.at(-1) ?? null)}`)
    .digest('hex')
    .slice(0, 20)}`;
}
