/**
 * Runs the attempt plan: each route in turn, each attempt translated afresh by its own protocol,
 * moving on only on a retryable failure and only while nothing has reached the client. For a
 * stream that means before its first event is forwarded: a `start` event alone is held back, so
 * an upstream that accepts the connection and then fails can still be replaced.
 */
import type { FastifyBaseLogger } from 'fastify';
import { BatchCollector, type CanonicalRequest, type CanonicalResult, type StreamBatch } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import { errors, type GatewayError } from '../core/errors.ts';
import type { CallContext, ChatProtocol } from '../protocols/protocol.ts';
import type { ChatProtocolRegistry } from '../protocols/registry.ts';
import { asGatewayError, mayFallBack } from '../routing/fallback.ts';

export interface AttemptContext {
  readonly request: CanonicalRequest;
  readonly attempts: readonly RouteEndpoint[];
  readonly protocols: ChatProtocolRegistry;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly requestId: string;
  readonly signal: AbortSignal;
  readonly logger: FastifyBaseLogger;
}

export interface CompletedAttempt {
  readonly result: CanonicalResult;
  readonly endpoint: RouteEndpoint;
}

export async function completeWithFallback(context: AttemptContext): Promise<CompletedAttempt> {
  for (let index = 0; ; index++) {
    const endpoint = context.attempts[index];
    try {
      const result = await protocolFor(context, endpoint).complete(context.request, endpoint, callContext(context, endpoint));
      return { result, endpoint };
    } catch (error) {
      handleFailure(context, asGatewayError(error), index, endpoint);
    }
  }
}

export interface OpenedStream {
  readonly endpoint: RouteEndpoint;
  readonly iterator: AsyncIterator<StreamBatch>;
  /** The events read so far: a held-back `start`, the first forwarded event, and what came with it. */
  readonly firstEvents: StreamBatch;
}

export async function openStreamWithFallback(context: AttemptContext): Promise<OpenedStream> {
  for (let index = 0; ; index++) {
    const endpoint = context.attempts[index];
    let iterator: AsyncIterator<StreamBatch> | undefined;
    try {
      iterator = protocolFor(context, endpoint).stream(context.request, endpoint, callContext(context, endpoint))[Symbol.asyncIterator]();
      return { endpoint, iterator, firstEvents: await readFirstEvents(iterator) };
    } catch (error) {
      if (iterator) await closeQuietly(iterator);
      handleFailure(context, asGatewayError(error), index, endpoint);
    }
  }
}

/**
 * Reads batches up to the first event worth forwarding (anything but `start`); an error before it is
 * thrown (fallback still possible).
 */
async function readFirstEvents(iterator: AsyncIterator<StreamBatch>): Promise<StreamBatch> {
  const events = new BatchCollector();
  let forwardable = false;
  while (true) {
    const step = await iterator.next();
    if (step.done) throw errors.upstreamEndedEarly();
    for (const event of step.value) {
      if (event.type === 'error' && !forwardable) throw event.error;
      events.push(event);
      if (event.type !== 'start') forwardable = true;
    }
    if (forwardable) return events.take()!;
  }
}

export async function closeQuietly(iterator: AsyncIterator<StreamBatch>): Promise<void> {
  try {
    await iterator.return?.();
  } catch {
    // The upstream is being abandoned; its clean-up failure changes nothing for the client.
  }
}

/** Throws unless the next route may be tried. */
function handleFailure(context: AttemptContext, error: GatewayError, index: number, endpoint: RouteEndpoint): void {
  if (!mayFallBack(error, index, context.attempts.length, context.signal)) throw error;
  context.logger.warn(
    { requestId: context.requestId, provider: endpoint.provider.id, status: error.status, code: error.code },
    'upstream attempt failed; falling back to the next route',
  );
}

function protocolFor(context: AttemptContext, endpoint: RouteEndpoint): ChatProtocol {
  // Selection only keeps routes whose protocol exists.
  return context.protocols[endpoint.provider.kind]!;
}

function callContext(context: AttemptContext, endpoint: RouteEndpoint): CallContext {
  const variable = endpoint.provider.api_key_env;
  return {
    apiKey: variable === undefined ? undefined : context.env[variable],
    signal: context.signal,
    requestId: context.requestId,
  };
}
