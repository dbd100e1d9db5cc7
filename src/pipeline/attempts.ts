/**
 * Runs the attempt plan: each route in turn, each attempt translated afresh by its own protocol,
 * moving on only on a retryable failure and only while nothing has reached the client. For a
 * stream that means before its first event is forwarded: a `start` event alone is held back, so
 * an upstream that accepts the connection and then fails can still be replaced. Blind to the kind
 * of output: the caller says how one route is called.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { StreamBatch } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import type { GatewayError } from '../core/errors.ts';
import type { CallContext } from '../protocols/protocol.ts';
import { asGatewayError, mayFallBack } from '../routing/fallback.ts';
import { CheckedStream } from './stream-rules.ts';

export interface AttemptContext {
  readonly attempts: readonly RouteEndpoint[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly requestId: string;
  readonly signal: AbortSignal;
  readonly logger: FastifyBaseLogger;
}

export interface CompletedAttempt<Result> {
  readonly result: Result;
  readonly endpoint: RouteEndpoint;
}

export async function completeWithFallback<Result>(
  context: AttemptContext,
  call: (endpoint: RouteEndpoint, callContext: CallContext) => Promise<Result>,
): Promise<CompletedAttempt<Result>> {
  for (let index = 0; ; index++) {
    const endpoint = context.attempts[index];
    try {
      return { result: await call(endpoint, callContext(context, endpoint)), endpoint };
    } catch (error) {
      handleFailure(context, asGatewayError(error), index, endpoint);
    }
  }
}

export interface OpenedStream {
  readonly endpoint: RouteEndpoint;
  readonly stream: CheckedStream;
  /** The events read so far: a held-back `start`, the first forwarded event, and what came with it. */
  readonly firstEvents: StreamBatch;
}

export async function openStreamWithFallback(
  context: AttemptContext,
  open: (endpoint: RouteEndpoint, callContext: CallContext) => AsyncIterable<StreamBatch>,
): Promise<OpenedStream> {
  for (let index = 0; ; index++) {
    const endpoint = context.attempts[index];
    let stream: CheckedStream | undefined;
    try {
      stream = new CheckedStream(open(endpoint, callContext(context, endpoint))[Symbol.asyncIterator]());
      return { endpoint, stream, firstEvents: await stream.first() };
    } catch (error) {
      await stream?.close();
      handleFailure(context, asGatewayError(error), index, endpoint);
    }
  }
}

/** Throws unless the next route may be tried. */
function handleFailure(context: AttemptContext, error: GatewayError, index: number, endpoint: RouteEndpoint): void {
  if (!mayFallBack(error, index, context.attempts.length, context.signal)) throw error;
  context.logger.warn(
    // The cause says what failed (a malformed answer carries its body, cut short: protocols/wire-schema.ts).
    { requestId: context.requestId, provider: endpoint.provider.id, status: error.status, code: error.code, err: error.cause },
    'upstream attempt failed; falling back to the next route',
  );
}

function callContext(context: AttemptContext, endpoint: RouteEndpoint): CallContext {
  const variable = endpoint.provider.api_key_env;
  return {
    apiKey: variable === undefined ? undefined : context.env[variable],
    signal: context.signal,
    requestId: context.requestId,
  };
}
