/**
 * The start-and-poll driver of a metered call (./metered-call.ts): a long upstream operation (a
 * video generation today; any batch or long-running upstream work) that is started once, stored as
 * a checkpoint, and looked at until it ends. Each step is one short upstream call, so that whoever
 * schedules the steps (jobs/video-job.ts) may run each one in any process, from the checkpoint
 * alone. When the operation ends, the metered call takes over in its one order: a success is
 * metered, admitted, settled, amended and recorded (`MeteredCall.charge`, `record`); a failure or an
 * upstream cancellation is admitted, released and recorded (`MeteredCall.fail`).
 */
import type { RouteEndpoint } from '../catalog/types.ts';
import type { GatewayError } from '../core/errors.ts';
import type { KindTypes } from './kind.ts';
import type { MeteredCall } from './metered-call.ts';

/** What an operation's checkpoint always holds: the route that accepted it. */
export interface StartedOperation {
  /** The route's key (`<provider>:<upstream model>`), looked up again in the catalog at each step. */
  readonly routeKey: string;
}

/** One look at an operation. */
export type OperationLook<Delivered> =
  /** Not done; `retryAfterMs`: the provider's suggested wait before the next look, when it gave one. */
  | { readonly status: 'running'; readonly retryAfterMs?: number }
  | { readonly status: 'succeeded'; readonly delivered: Delivered }
  /** The upstream reported the work failed: final, whatever its error would mean for a call. */
  | { readonly status: 'failed'; readonly error: GatewayError }
  /** The upstream cancelled the work (not the client): ends with `cancelled_upstream`. */
  | { readonly status: 'cancelled' };

export interface OperationDriver<T extends KindTypes, Checkpoint extends StartedOperation, Delivered> {
  /** Starts the operation on the first route of the plan that accepts it (falling back while none did). */
  start(call: MeteredCall<T>): Promise<Checkpoint>;
  /**
   * Looks at the operation once (`signal` aborts the look). A transient failure is thrown as a
   * retryable GatewayError: the scheduler looks again later.
   */
  look(call: MeteredCall<T>, endpoint: RouteEndpoint, checkpoint: Checkpoint, signal: AbortSignal): Promise<OperationLook<Delivered>>;
  /** The kind's meter of what was delivered. */
  meter(call: MeteredCall<T>, endpoint: RouteEndpoint, delivered: Delivered): T['meter'];
}
