/**
 * A metered call run as a background job: submitted by a route (validated, quoted and held in the
 * request, the hold in the job's name), completed later by a worker through the same core as a
 * call answered at once (pipeline/prepared-record.ts). A dialect supplies only its objects: the
 * queued one, the rendering of a result, and the failed and cancelled ones.
 */
import { asGatewayError } from '../routing/fallback.ts';
import type { GatewayError } from '../core/errors.ts';
import type { CallableKindTypes, KindTypes, MeteredRequest, OutputKind } from '../pipeline/kind.ts';
import type { Pipeline, PreparedCall } from '../pipeline/pipeline.ts';
import { preparedCallRecord, resumePrepared, type PreparedCallRecord } from '../pipeline/prepared-record.ts';
import type { CallInput, RenderResult } from '../pipeline/types.ts';
import type { ParamNamer } from '../policy/violation.ts';
import type { EndedJobStatus, JobKind, JobRecord } from '../storage/store.ts';
import type { JobContext, JobHandler } from './handler.ts';
import { jobGate, type JobEnds } from './job-gate.ts';
import type { Jobs } from './jobs.ts';

/** What a metered job stores: the prepared call and whatever the dialect needs to name its fields again. */
export interface MeteredPayload<Request> {
  readonly call: PreparedCallRecord<Request>;
  readonly context: unknown;
}

/** What submitting a metered job needs of its kind: which job and output kinds, and the object it starts with. */
export interface MeteredJobKind<T extends KindTypes> {
  readonly jobKind: JobKind;
  readonly output: OutputKind<T>;
  /** The object of the job as it waits for a worker. */
  queued(prepared: PreparedCall<T>, jobId: string): unknown;
}

/** A metered job completed by one protocol call (a background response): its objects at each step. */
export interface MeteredJobPresenter<T extends CallableKindTypes, Body> extends MeteredJobKind<T>, JobEnds<Body> {
  /** The dialect's names for the request's fields, from what `submitMetered` stored as `context`. */
  names(context: unknown): ParamNamer;
  render: RenderResult<T, Body>;
}

/**
 * Validates, quotes and holds credit for the call (every refusal happens here, before anything is
 * queued), then stores the job durably with its hold: a crash after the answer loses neither.
 */
export async function submitMetered<T extends KindTypes>(
  pipeline: Pipeline,
  jobs: Jobs,
  presenter: MeteredJobKind<T>,
  input: CallInput<T['request']> & { readonly jobId: string; readonly context: unknown },
): Promise<JobRecord> {
  const { lifetimeMs } = jobs.settings;
  const prepared = await pipeline.prepare(presenter.output, input, { holder: { kind: 'job', id: input.jobId }, ttlMs: lifetimeMs });
  try {
    const payload: MeteredPayload<T['request']> = { call: preparedCallRecord(prepared), context: input.context };
    return await jobs.submit({
      id: input.jobId,
      kind: presenter.jobKind,
      owner: prepared.payer.owner,
      keyId: prepared.payer.keyId,
      status: 'queued',
      payload,
      result: presenter.queued(prepared, input.jobId),
      reservationId: prepared.hold.reservation.id,
      createdAt: prepared.createdAt,
      expiresAt: prepared.createdAt + lifetimeMs,
    });
  } catch (error) {
    throw await pipeline.meteredCall(prepared).fail(error);
  }
}

/**
 * The request log row of a metered job that ended without its run recording it (JobHandler.recordEnd):
 * who asked for what, when, and how it ended, with the cost its end recorded (none for a failed or
 * cancelled job). A job whose worker died after its end has no meter left: its row carries the
 * cost and the object, not the token counts.
 */
export function recordMeteredJobEnd(pipeline: Pipeline, job: JobRecord, status: EndedJobStatus, error: GatewayError | null): void {
  const call = (job.payload as Partial<MeteredPayload<MeteredRequest>> | null)?.call;
  // A job without a prepared call (made by hand in a test or a tool) has no request to record.
  if (!call) return;
  const answered = status === 'completed' || status === 'incomplete';
  pipeline.recordRequest({
    requestId: call.requestId,
    owner: call.payer.owner,
    keyId: call.payer.keyId,
    route: call.route,
    stream: call.request.stream,
    createdAt: call.createdAt,
    durationMs: Math.max(0, pipeline.now() - call.createdAt),
    modelId: call.modelId,
    status,
    // 499 as for any request whose client went away first: nothing was answered or charged.
    httpStatus: answered ? 200 : status === 'cancelled' ? 499 : (error?.status ?? 500),
    errorCode: error?.code ?? null,
    ...(answered ? { cost: job.cost ?? 0n, output: call.request.store === false ? undefined : job.result } : {}),
  });
}

/**
 * Resumes a job's prepared call; undefined when it cannot run (its hold is gone, or its routes left
 * the config): then the job is ended as failed first, and only then is its hold released and its
 * row recorded, as for any end (pipeline/metered-call.ts).
 */
export async function resumeJobCall<T extends KindTypes>(
  pipeline: Pipeline,
  output: OutputKind<T>,
  job: JobRecord,
  context: JobContext,
  names: ParamNamer,
  failed: (job: JobRecord, error: GatewayError) => unknown,
): Promise<PreparedCall<T> | undefined> {
  const payload = job.payload as MeteredPayload<T['request']>;
  try {
    const prepared = await resumePrepared(pipeline, output, payload.call, { names, signal: context.signal });
    context.traced(prepared.trace);
    return prepared;
  } catch (error) {
    const failure = asGatewayError(error);
    if (await context.end('failed', failed(job, failure))) {
      if (job.reservationId !== null) await pipeline.ledger.release(job.reservationId);
      recordMeteredJobEnd(pipeline, job, 'failed', failure);
    }
    return undefined;
  }
}

export function meteredJobHandler<T extends CallableKindTypes, Body>(pipeline: Pipeline, presenter: MeteredJobPresenter<T, Body>): JobHandler {
  return {
    kind: presenter.jobKind,
    failed: presenter.failed,
    cancelled: presenter.cancelled,
    recordEnd: (job, status, error) => recordMeteredJobEnd(pipeline, job, status, error),
    // One upstream call, holding its slot to the end.
    schedule: 'call',
    async run(job, context) {
      const payload = job.payload as MeteredPayload<T['request']>;
      const prepared = await resumeJobCall(pipeline, presenter.output, job, context, presenter.names(payload.context), presenter.failed);
      if (prepared === undefined) return;
      // Moved on (cancelled, or taken over) before anything was sent: its hold is someone else's now.
      if (!(await context.dispatch())) return;
      try {
        await pipeline.meteredCall(prepared, jobGate(job, context, presenter)).complete(presenter.render);
      } catch {
        // Ended, released and recorded by the call (or by whoever won the job).
      }
    },
  };
}
