/**
 * Counts every keyed request against its key's requests-per-minute and concurrent-requests limits
 * (docs/limits.md), as soon as its key is known and its scope checked (the authenticator runs this
 * next): a request refused for its key is never counted, and a malformed request counts like any
 * other. An admitted request carries the rate-limit headers; its concurrent-requests slot is freed
 * when its response ends, streams included, or when the client leaves.
 */
import type { FastifyRequest } from 'fastify';
import type { Admission } from '../auth/context.ts';
import type { Limiter, LimitTicket } from '../limits/limiter.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The admitted request's ticket: its token levels for the pre-check, its slot for a background
     * submission to hand over; null when nothing is counted. A decorated property (server/app.ts)
     * rather than a WeakMap keyed by requests: a WeakMap entry per request made every garbage
     * collection walk them, about 10 µs of CPU per limited request (docs/performance.md).
     */
    limitTicket: LimitTicket | null;
  }
}

export function limitAdmission(limiter: Limiter): Admission {
  return (request, reply) => {
    const answer = limiter.admit(request.auth);
    if (answer === undefined) return undefined;
    const admitted = (ticket: LimitTicket): void => {
      for (const [name, value] of ticket.headers) reply.header(name, value);
      request.limitTicket = ticket;
      // `on`, not `once`: the event comes once, and release is idempotent.
      reply.raw.on('close', ticket.release);
    };
    if (answer instanceof Promise) return answer.then(admitted);
    admitted(answer);
    return undefined;
  };
}

/** The token levels the request's admission found, for its call's pre-check (LimitTicket.tokenLevels). */
export function admittedTokenLevels(request: FastifyRequest): readonly number[] | undefined {
  return request.limitTicket?.tokenLevels;
}

/**
 * A background job counts against concurrent requests until it ends (docs/limits.md): the request
 * that queued it hands its slot to the job, which the job's end frees (server/compose.ts).
 */
export function holdSlotForJob(request: FastifyRequest, jobId: string, ttlMs: number): Promise<void> {
  return request.limitTicket?.handOver(jobId, ttlMs) ?? Promise.resolve();
}
