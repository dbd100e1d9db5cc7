/**
 * A prepared call as plain, storable data, and back: the seam between a request that answers at
 * once (a queued background response, a video job) and the worker that completes the call later,
 * in this process or another one.
 *
 * The record holds what was decided in the request and must not be decided again: the kind, the
 * canonical request, who pays and at which rate, the selected model, the attempt plan as route
 * keys, and the credit hold's id. Nothing live (no protocol, no open connection, no timer). A
 * worker resumes it against the current catalog and ledger: routes that left the config are
 * skipped, and a hold that is gone (expired, or settled by another worker) ends the call without
 * a second charge.
 */
import { performance } from 'node:perf_hooks';
import { creditHoldFor } from '../billing/credit.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import { errors } from '../core/errors.ts';
import type { CounterCheck } from '../limits/backend.ts';
import type { ParamNamer } from '../policy/violation.ts';
import type { OwnerRef } from '../storage/store.ts';
import { AttemptLog } from './attempt-log.ts';
import type { KindTypes, OutputKind } from './kind.ts';
import type { Pipeline, PreparedCall } from './pipeline.ts';

export interface PreparedCallRecord<Request> {
  /** The kind's name; a record is resumed only by the kind that made it. */
  readonly kind: string;
  readonly requestId: string;
  readonly route: string;
  /** The kind's canonical request, as decoded in the original request (JSON data). */
  readonly request: Request;
  readonly payer: {
    readonly owner: OwnerRef;
    readonly keyId: string;
    /** The account rate as an exact fraction, in decimal strings (JSON has no bigint). */
    readonly rate: { readonly numerator: string; readonly denominator: string };
  };
  readonly modelId: string;
  /** The attempt plan, in order, as route keys of the model. */
  readonly routeKeys: readonly string[];
  readonly reservationId: string;
  /** Epoch milliseconds of the original request. */
  readonly createdAt: number;
  /**
   * The key's tokens-per-minute counters, as its limits stood when the call was prepared, so that
   * the tokens of work finished elsewhere are counted too (docs/limits.md); absent without any.
   */
  readonly tokenChecks?: readonly CounterCheck[];
  /** The W3C `traceparent` of the request's span, which the job's span links to; absent when it was not traced. */
  readonly traceparent?: string;
}

export function preparedCallRecord<T extends KindTypes>(prepared: PreparedCall<T>): PreparedCallRecord<T['request']> {
  const { payer } = prepared;
  const traceparent = prepared.trace?.traceparent;
  return {
    kind: prepared.kind.name,
    requestId: prepared.requestId,
    route: prepared.route,
    request: prepared.request,
    payer: {
      owner: payer.owner,
      keyId: payer.keyId,
      rate: { numerator: payer.rate.numerator.toString(), denominator: payer.rate.denominator.toString() },
    },
    modelId: prepared.modelId,
    routeKeys: prepared.attempts.map((endpoint) => endpoint.key),
    reservationId: prepared.hold.reservation.id,
    createdAt: prepared.createdAt,
    ...(prepared.tokenChecks ? { tokenChecks: prepared.tokenChecks } : {}),
    ...(traceparent !== undefined && { traceparent }),
  };
}

export interface ResumeOptions {
  /** The dialect's names for the request's fields (a protocol may still reject one). */
  readonly names: ParamNamer;
  /** Aborted when the job is cancelled; the upstream call is aborted with it. */
  readonly signal: AbortSignal;
}

/** The call of a record, ready for a metered call (Pipeline.meteredCall). */
export async function resumePrepared<T extends KindTypes>(
  pipeline: Pipeline,
  kind: OutputKind<T>,
  record: PreparedCallRecord<T['request']>,
  options: ResumeOptions,
): Promise<PreparedCall<T>> {
  if (record.kind !== kind.name) throw new Error(`a ${record.kind} call cannot be resumed as ${kind.name}`);
  const reservation = await pipeline.ledger.getReservation(record.reservationId);
  if (reservation === null || reservation.status !== 'open') {
    throw errors.holdNotOpen();
  }
  const hold = creditHoldFor(pipeline.ledger, reservation, record.requestId);
  const attempts: RouteEndpoint[] = [];
  for (const key of record.routeKeys) {
    const endpoint = pipeline.catalog.route(record.modelId, key);
    if (endpoint) attempts.push(endpoint);
  }
  // The hold stays as it is: whoever ends the work releases it (./metered-call.ts, on the order of an end).
  if (attempts.length === 0) throw errors.plannedRoutesGone(record.modelId);
  const { payer } = record;
  const startedAt = performance.now();
  const trace = pipeline.tracing?.job({
    requestId: record.requestId,
    route: record.route,
    requestModel: record.request.model,
    traceparent: record.traceparent,
  });
  trace?.prepared(kind.capability.name, record.request.model);
  return {
    kind,
    requestId: record.requestId,
    route: record.route,
    request: record.request,
    names: options.names,
    payer: { owner: payer.owner, keyId: payer.keyId, rate: { numerator: BigInt(payer.rate.numerator), denominator: BigInt(payer.rate.denominator) } },
    signal: options.signal,
    signalOf: 'job',
    createdAt: record.createdAt,
    startedAt,
    modelId: record.modelId,
    attempts,
    hold,
    estimate: kind.estimate(record.request),
    tokenChecks: record.tokenChecks,
    trace,
    attemptLog: new AttemptLog(startedAt),
  };
}
