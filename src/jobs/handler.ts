/**
 * What a kind of job (a background response, a video) gives the runner, and what the runner gives
 * it back while it runs one job (docs/jobs.md).
 */
import type { GatewayError } from '../core/errors.ts';
import type { Picos } from '../core/money.ts';
import type { EndedJobStatus, JobKind, JobRecord } from '../storage/store.ts';
import type { CallTrace } from '../telemetry/tracing.ts';

export interface JobHandler {
  readonly kind: JobKind;
  /**
   * Runs a claimed job to its end, recording the end through `context.end`. The runner has already
   * dealt with a job taken over after its work was sent upstream; a job handed here was not.
   */
  run(job: JobRecord, context: JobContext): Promise<void>;
  /** The client-visible object of a job that ended with `error` and no result. */
  failed(job: JobRecord, error: GatewayError): unknown;
  /** The client-visible object of a cancelled job. */
  cancelled(job: JobRecord): unknown;
  /**
   * Records a job that ended without its run recording it: cancelled (before or while it ran),
   * failed when taken over or resumed without its hold or routes, or ended by a worker that died
   * before its row (finished by the runner's reconciliation, from the job's recorded cost). Its
   * request log row is written once: a row the run writes too keeps the first.
   */
  recordEnd(job: JobRecord, status: EndedJobStatus, error: GatewayError | null): void;
  /**
   * How the runner schedules the kind's jobs (docs/jobs.md, "Scheduling"):
   * - `call`: a job holds one of the `jobs.concurrency` slots from its claim to its end (a
   *   background response's upstream call);
   * - `operation`: start-and-poll work that goes on upstream without a worker (a video generation).
   *   Each claim runs one short step (the start, or one look at the operation) in one of the
   *   `jobs.operation_steps` step slots, and the job is parked between steps (`JobContext.park`).
   *   A stopping instance hands a step back at once; whoever claims the job next resumes it from
   *   its checkpoint.
   */
  readonly schedule: JobSchedule;
}

export type JobSchedule = 'call' | 'operation';

export interface JobContext {
  /**
   * Aborted when the job is cancelled (on any instance), when this worker lost its lease, or when
   * the instance stops: the upstream call is aborted with it.
   */
  readonly signal: AbortSignal;
  /**
   * Records that the work is about to be sent upstream (a takeover after this fails the job rather
   * than run it twice). False when the job has moved on: it must not be sent.
   */
  dispatch(): Promise<boolean>;
  /**
   * Records what a worker taking the job over needs to go on with work that continues upstream
   * (JSON), while this worker holds the job. False when it has moved on.
   */
  checkpoint(state: unknown): Promise<boolean>;
  /**
   * Ends this step of an `operation` job: records its checkpoint, gives its lease (and slot) back
   * and parks it until `at`, when any instance may claim its next step. False when it had moved on.
   */
  park(at: number, checkpoint: unknown): Promise<boolean>;
  /**
   * Ends the job with its client-visible object (and, for `completed` or `incomplete`, the cost it
   * is to be charged), while this worker still holds it. False when it had moved on (a cancel won),
   * and then nothing may be charged.
   */
  end(status: EndedJobStatus, result: unknown, cost?: Picos): Promise<boolean>;
  /** Replaces the ended job's object (its charge was capped below the cost). */
  amend(result: unknown): Promise<void>;
  /**
   * The span of the call this run resumed (metered-job.ts): when the run ends without recording
   * the call's row (parked, handed back, or moved on), the runner ends the span, saying why.
   */
  traced(trace: CallTrace | undefined): void;
}
