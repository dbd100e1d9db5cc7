/**
 * The gate of a metered call run as a job (pipeline/metered-call.ts): the job's end is recorded by
 * compare-and-set before its hold is finished, so that only the worker that still holds the job
 * charges or releases it, and a crash between the two leaves an ended job whose recorded cost the
 * runner's reconciliation finishes (docs/jobs.md, "The order of a job's end").
 */
import { GatewayError } from '../core/errors.ts';
import type { ChargeGate } from '../pipeline/metered-call.ts';
import type { EndedJobStatus, JobRecord } from '../storage/store.ts';
import type { JobContext } from './handler.ts';

/** A job kind's objects at its end. */
export interface JobEnds<Body> {
  /** How an answer ends the job (a text cut short by its token limit is `incomplete`). */
  ended(body: Body): Exclude<EndedJobStatus, 'cancelled'>;
  failed(job: JobRecord, error: GatewayError): unknown;
  cancelled(job: JobRecord): unknown;
}

export function jobGate<Body>(job: JobRecord, context: JobContext, ends: JobEnds<Body>): ChargeGate<Body> {
  return {
    admit: (body, cost) => context.end(ends.ended(body), body, cost),
    amend: (body) => context.amend(body),
    refuse: (end) => {
      if (end.status === 'cancelled') return context.end('cancelled', ends.cancelled(job));
      // An aborted job fails with the abort's reason (the instance stopping), not with the cancelled upstream call.
      const reason: unknown = context.signal.aborted ? context.signal.reason : undefined;
      return context.end('failed', ends.failed(job, reason instanceof GatewayError ? reason : end.error));
    },
  };
}
