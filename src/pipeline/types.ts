/**
 * The shapes the pipeline hands a dialect. A dialect decodes its body into a CanonicalRequest and
 * a ParamNamer, and renders what comes back; everything between is the same for every dialect.
 */
import type { AuthContext } from '../auth/context.ts';
import type { CanonicalRequest, CanonicalResult, StreamBatch, StreamEvent, Usage } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import type { Picos } from '../core/money.ts';
import type { ParamNamer } from '../policy/violation.ts';

export interface PipelineInput {
  readonly request: CanonicalRequest;
  readonly names: ParamNamer;
  readonly auth: AuthContext;
  /** The gateway request id (`x-gateway-request-id`), also the request log's key. */
  readonly requestId: string;
  /** The request log's route name: chat | messages | responses. */
  readonly route: string;
  /** Aborted when the client goes away; the upstream call is aborted with it. */
  readonly signal: AbortSignal;
}

/** The call actually made: which model (after `models` fallback) and which route served it. */
export interface ServedCall {
  readonly requestId: string;
  readonly request: CanonicalRequest;
  /** Public model id of the model that served the request (a fallback model when one was used). */
  readonly modelId: string;
  readonly endpoint: RouteEndpoint;
  /** Epoch milliseconds at which the gateway received the request. */
  readonly createdAt: number;
}

export interface Settlement {
  /** The usage that was billed (the provider's, or the documented estimate for a cut-off stream). */
  readonly usage: Usage;
  /** Web search billing units charged (`billed_queries`). */
  readonly searchUnits: number;
  /** What the ledger charged: the cost header, the stream usage `cost` and the ledger entry agree. */
  readonly charged: Picos;
}

/** A dialect's rendering of a complete result (the client body, also the stored output). */
export type RenderResult<T> = (result: CanonicalResult, call: ServedCall, settlement: Settlement) => T;

export interface CompletedCall<T> {
  readonly body: T;
  /** `body` serialized: what the client receives and the request log keeps. */
  readonly json: string;
  readonly call: ServedCall;
  readonly settlement: Settlement;
}

/** A stream that has started: its first event came from this route, so no fallback remains. */
export interface StreamRun {
  readonly call: ServedCall;
  /**
   * Canonical events for the client, in batches of those that arrived together, the terminal
   * `finish` or `error` last. The request is settled before the terminal event is handed out, so
   * `settlement` is set when a dialect renders it.
   * Stopping the iteration early (client gone) aborts the upstream and settles what was used.
   */
  readonly events: AsyncIterable<StreamBatch>;
  readonly settlement: Settlement | undefined;
}
