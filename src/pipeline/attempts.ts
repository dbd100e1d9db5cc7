/**
 * Runs the attempt plan: each route in turn, each attempt translated afresh by its own protocol,
 * moving on only on a retryable failure and only while nothing has reached the client. For a
 * stream that means before its first event is forwarded: a `start` event alone is held back, so
 * an upstream that accepts the connection and then fails can still be replaced. Blind to the kind
 * of output: the caller says how one route is called.
 *
 * With endpoint health (routing/endpoint-health.ts), the plan is reordered so that endpoints whose
 * breaker is open come last, an endpoint whose breaker is open is skipped while another remains
 * after it, and every attempt's outcome is recorded.
 *
 * With tracing, each attempt has its span, a child of the call's, told the same outcome as the
 * breaker, with the reason the attempt before it did not serve; its trace context goes upstream.
 */
import type { Logger } from '../core/logger.ts';
import type { StreamBatch } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import type { GatewayError } from '../core/errors.ts';
import type { CallContext } from '../protocols/protocol.ts';
import type { AttemptRecord, EndpointHealth } from '../routing/endpoint-health.ts';
import { asGatewayError, mayFallBack } from '../routing/fallback.ts';
import { CheckedStream } from './stream-rules.ts';
import type { CallTrace, TraceHeaders } from '../telemetry/tracing.ts';

export interface AttemptContext {
  readonly attempts: readonly RouteEndpoint[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly requestId: string;
  readonly signal: AbortSignal;
  readonly logger: Logger;
  readonly health?: EndpointHealth;
  /** The call's span and the capability called, when tracing is on. */
  readonly trace?: { readonly call: CallTrace; readonly capability: string };
}

export interface CompletedAttempt<Result> {
  readonly result: Result;
  readonly endpoint: RouteEndpoint;
}

export async function completeWithFallback<Result>(
  context: AttemptContext,
  call: (endpoint: RouteEndpoint, callContext: CallContext) => Promise<Result>,
): Promise<CompletedAttempt<Result>> {
  const attempts = context.health?.order(context.attempts) ?? context.attempts;
  let fallbackReason: string | undefined;
  for (let index = 0; ; index++) {
    const endpoint = attempts[index];
    if (!(await admitted(context, attempts, index))) {
      fallbackReason = BREAKER_OPEN;
      continue;
    }
    const { record, headers } = beginAttempt(context, endpoint, fallbackReason);
    try {
      const result = await call(endpoint, callContext(context, endpoint, headers));
      record?.succeeded();
      return { result, endpoint };
    } catch (error) {
      const failure = asGatewayError(error);
      record?.failed(failure, context.signal.aborted);
      handleFailure(context, failure, index, attempts.length, endpoint);
      fallbackReason = reasonOf(failure);
    }
  }
}

export interface OpenedStream {
  readonly endpoint: RouteEndpoint;
  readonly stream: CheckedStream;
  /** The events read so far: a held-back `start`, the first forwarded event, and what came with it. */
  readonly firstEvents: StreamBatch;
  /** Where the stream's end is told (its first event already was). */
  readonly record: AttemptRecord | undefined;
}

export async function openStreamWithFallback(
  context: AttemptContext,
  open: (endpoint: RouteEndpoint, callContext: CallContext) => AsyncIterable<StreamBatch>,
): Promise<OpenedStream> {
  const attempts = context.health?.order(context.attempts) ?? context.attempts;
  let fallbackReason: string | undefined;
  for (let index = 0; ; index++) {
    const endpoint = attempts[index];
    if (!(await admitted(context, attempts, index))) {
      fallbackReason = BREAKER_OPEN;
      continue;
    }
    const { record, headers } = beginAttempt(context, endpoint, fallbackReason);
    let stream: CheckedStream | undefined;
    try {
      stream = new CheckedStream(open(endpoint, callContext(context, endpoint, headers))[Symbol.asyncIterator]());
      const firstEvents = await stream.first();
      record?.firstByte();
      return { endpoint, stream, firstEvents, record };
    } catch (error) {
      await stream?.close();
      const failure = asGatewayError(error);
      record?.failed(failure, context.signal.aborted);
      handleFailure(context, failure, index, attempts.length, endpoint);
      fallbackReason = reasonOf(failure);
    }
  }
}

/** The fallback reason of an endpoint skipped because its breaker is open. */
const BREAKER_OPEN = 'breaker_open';

/** The fallback reason a failed attempt gives the next one: its error code. */
function reasonOf(failure: GatewayError): string {
  return failure.code ?? failure.type;
}

/**
 * The record of one attempt's outcome: its breaker's and its span's, told together; and the trace
 * context headers that go upstream with it.
 */
function beginAttempt(
  context: AttemptContext,
  endpoint: RouteEndpoint,
  fallbackReason: string | undefined,
): { readonly record: AttemptRecord | undefined; readonly headers: TraceHeaders | undefined } {
  const health = context.health?.begin(endpoint);
  if (context.trace === undefined) return { record: health, headers: undefined };
  const span = context.trace.call.attempt(endpoint, context.trace.capability, fallbackReason);
  if (health === undefined) return { record: span, headers: span.headers };
  const record: AttemptRecord = {
    firstByte() {
      health.firstByte();
      span.firstByte();
    },
    succeeded(outputTokens) {
      health.succeeded(outputTokens);
      span.succeeded(outputTokens);
    },
    failed(error, cancelled) {
      health.failed(error, cancelled);
      span.failed(error, cancelled);
    },
    abandoned() {
      health.abandoned();
      span.abandoned();
    },
  };
  return { record, headers: span.headers };
}

/**
 * Whether the attempt at `attempts[index]` goes: always for the last one (an open breaker is tried
 * last rather than refused), else as its endpoint's health says. Awaits only a probe's claim.
 */
async function admitted(context: AttemptContext, attempts: readonly RouteEndpoint[], index: number): Promise<boolean> {
  if (context.health === undefined || index === attempts.length - 1) return true;
  return context.health.admit(attempts[index]);
}

/** Throws unless the next route may be tried. */
function handleFailure(context: AttemptContext, error: GatewayError, index: number, attempts: number, endpoint: RouteEndpoint): void {
  if (!mayFallBack(error, index, attempts, context.signal)) throw error;
  context.logger.warn(
    // The cause says what failed (a malformed answer carries its body, cut short: protocols/wire-schema.ts).
    { requestId: context.requestId, provider: endpoint.provider.id, status: error.status, code: error.code, err: error.cause },
    'upstream attempt failed; falling back to the next route',
  );
}

function callContext(context: AttemptContext, endpoint: RouteEndpoint, traceHeaders: TraceHeaders | undefined): CallContext {
  const variable = endpoint.provider.api_key_env;
  return {
    apiKey: variable === undefined ? undefined : context.env[variable],
    signal: context.signal,
    requestId: context.requestId,
    traceHeaders,
  };
}
