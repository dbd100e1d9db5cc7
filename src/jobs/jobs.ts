/**
 * Background jobs as the routes see them (docs/jobs.md): submit one, find one of the caller's,
 * cancel one. The work itself is done by the runner of whichever instance claims it.
 */
import type { Logger } from '../core/logger.ts';
import type { Registry } from 'prom-client';
import { ENDED_JOB_STATUSES, type EndedJobStatus, type JobKind, type JobRecord, type NewJob, type OwnerRef } from '../storage/store.ts';
import { JobRunner, type RunnerStore } from './runner.ts';
import type { JobSettings } from './settings.ts';

/** The job record, for the routes that render one (they do not reach into storage themselves). */
export type { JobRecord } from '../storage/store.ts';

export type CancelOutcome = { readonly cancelled: true; readonly job: JobRecord } | { readonly cancelled: false; readonly job: JobRecord };

export class Jobs {
  readonly #store: RunnerStore;
  readonly #now: () => number;
  readonly runner: JobRunner;

  constructor(options: { store: RunnerStore; settings: JobSettings; logger: Logger; metrics: Registry; now: () => number }) {
    this.#store = options.store;
    this.#now = options.now;
    this.runner = new JobRunner(options);
  }

  get settings(): JobSettings {
    return this.runner.settings;
  }

  /** Stores the job durably (its hold with it) and wakes this instance's workers; its kind must have a handler. */
  async submit(job: NewJob): Promise<JobRecord> {
    this.runner.handlerFor(job.kind);
    const created = await this.#store.createJob(job);
    this.runner.wake();
    return created;
  }

  /** The caller's job of this kind with this id; null for an unknown, expired or another owner's job (all 404). */
  async find(kind: JobKind, id: string, owner: OwnerRef): Promise<JobRecord | null> {
    const job = await this.#store.getJob(id);
    if (job === null || job.kind !== kind || job.owner.kind !== owner.kind || job.owner.id !== owner.id || job.expiresAt <= this.#now()) return null;
    return job;
  }

  /**
   * Cancels the caller's queued or in-progress job: its object becomes the handler's cancelled one,
   * its hold is released in full, and its upstream call is aborted (here at once; on another
   * instance at that instance's next heartbeat). An ended job is returned as it is, not cancelled.
   * Null when there is no such job of the caller's.
   */
  async cancel(kind: JobKind, id: string, owner: OwnerRef): Promise<CancelOutcome | null> {
    const job = await this.find(kind, id, owner);
    if (job === null) return null;
    if (isEnded(job.status)) return { cancelled: false, job };
    const result = this.runner.handlerFor(job.kind).cancelled(job);
    const cancelled = await this.#store.transitionJob(id, ['queued', 'in_progress'], { status: 'cancelled', result, leaseUntil: null, now: this.#now() });
    if (cancelled === null) {
      // It ended meanwhile (a worker won the race): as it ended.
      const ended = await this.#store.getJob(id);
      return ended === null ? null : { cancelled: false, job: ended };
    }
    if (cancelled.reservationId !== null) await this.#store.release(cancelled.reservationId);
    this.runner.abortLocal(id);
    this.runner.handlerFor(job.kind).recordEnd(cancelled, 'cancelled', null);
    this.runner.jobFinished(cancelled);
    return { cancelled: true, job: cancelled };
  }
}

export function isEnded(status: JobRecord['status']): status is EndedJobStatus {
  return (ENDED_JOB_STATUSES as readonly string[]).includes(status);
}
