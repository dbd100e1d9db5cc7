/**
 * Counts every keyed request against its key's requests-per-minute and concurrent-requests limits
 * (docs/limits.md), as soon as its key is known and its scope checked (the authenticator runs this
 * next): a request refused for its key is never counted, and a malformed request counts like any
 * other. An admitted request carries the rate-limit headers; its concurrent-requests slot is freed
 * when its response ends, streams included, or when the client leaves.
 */
import type { Admission } from '../auth/context.ts';
import type { Limiter } from '../limits/limiter.ts';

export function limitAdmission(limiter: Limiter): Admission {
  return (request, reply) => {
    const pending = limiter.admit(request.auth);
    if (pending === undefined) return undefined;
    return pending.then((ticket) => {
      for (const [name, value] of ticket.headers) reply.header(name, value);
      reply.raw.once('close', ticket.release);
    });
  };
}
