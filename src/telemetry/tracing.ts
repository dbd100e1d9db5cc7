/**
 * What the gateway asks of tracing (docs/operations.md, "Tracing"), in its own terms: a span per
 * HTTP request, per job run, and per upstream attempt. The OpenTelemetry implementation
 * (./otel-tracing.ts) is loaded only when tracing is on (./load.ts); when it is off there is no
 * `Tracing` at all, and every caller's `trace?.` does nothing.
 *
 * Spans carry names, models, token counts, costs, statuses and ids; never a key, a prompt or an
 * answer.
 */
import type { RouteEndpoint } from '../catalog/types.ts';
import type { AttemptRecord } from '../routing/endpoint-health.ts';
import type { RequestLogRecord } from '../storage/store.ts';

/** The W3C trace context headers (`traceparent`, `tracestate`) sent upstream with one attempt. */
export type TraceHeaders = Readonly<Record<string, string>>;

export interface Tracing {
  /**
   * The server span of an HTTP request, a child of the client's `traceparent` when it sent one.
   * It ends when the response is over and, for a metered call, once the call's row is recorded.
   */
  request(
    headers: Readonly<Record<string, string | string[] | undefined>>,
    method: string,
    route: string | null,
    path: string,
    requestId: string,
  ): RequestTrace;
  /**
   * The span of a job's run of the call a request prepared (a background response, a video),
   * linked to that request's span by its stored `traceparent`; it ends when the call is recorded,
   * or when the run leaves the job to a later one unrecorded (`CallTrace.handedBack`).
   */
  job(call: JobCall): CallTrace;
  /** Exports what is still queued and stops (the server's last step). */
  shutdown(): Promise<void>;
}

/** What a job knows of the call it runs. */
export interface JobCall {
  readonly requestId: string;
  /** The request log's route name (responses, videos…). */
  readonly route: string;
  /** The model the client asked for. */
  readonly requestModel: string;
  /** The span context of the request that created the job; absent when it was not traced. */
  readonly traceparent: string | undefined;
}

/** The span of one metered call (a request's, or a job's), which its upstream attempts are children of. */
export interface CallTrace {
  /** This span's context, stored with work that outlives the request (a job links back to it). */
  readonly traceparent: string | undefined;
  /** The call is prepared: the capability it calls and the model the client asked for. */
  prepared(capability: string, requestModel: string): void;
  /** A metered call began whose row is recorded later, maybe after the response (a stream its client left). */
  expectRecord(): void;
  /** A span per upstream attempt; `fallbackReason` says why an earlier endpoint did not serve. */
  attempt(endpoint: RouteEndpoint, capability: string, fallbackReason: string | undefined): AttemptTrace;
  /** The call's request log row: model, tokens, cost, status. */
  recorded(record: RequestLogRecord): void;
  /**
   * A job's run ended without the call's row (the job runner tells it): the span ends as handed
   * back, saying why. Nothing when the row was recorded.
   */
  handedBack(reason: HandBackReason): void;
}

/**
 * Why a job's run ended without its row: a step of an operation `parked` until its next look, the
 * instance `stopping` (the job handed to another), or the job `moved_on` under it (cancelled, or
 * taken over by another worker, which ends it).
 */
export type HandBackReason = 'parked' | 'stopping' | 'moved_on';

export interface RequestTrace extends CallTrace {
  /** The response is over (written in full, or its connection closed). */
  responded(statusCode: number): void;
}

/** One upstream attempt: its outcome is told as its breaker's is (routing/endpoint-health.ts). */
export interface AttemptTrace extends AttemptRecord {
  /** The headers that make the upstream's own spans children of this attempt's. */
  readonly headers: TraceHeaders;
}
