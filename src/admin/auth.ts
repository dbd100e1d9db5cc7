/**
 * The admin API's own credential: `Authorization: Bearer $GATEWAY_ADMIN_KEY`. It is a separate
 * secret from every customer key; a customer key never opens an admin route (it simply is not this
 * secret) and the admin secret never opens a customer route (it is not a stored key hash).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { errors } from '../core/errors.ts';

export function adminGuard(adminKey: string): (request: FastifyRequest) => Promise<void> {
  // Comparing fixed-length digests keeps the comparison constant-time whatever the input length.
  const expected = digest(adminKey);
  return async (request) => {
    const authorization = request.headers.authorization;
    if (!authorization) throw errors.missingAdminKey();
    const match = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (!match || !timingSafeEqual(digest(match[1]), expected)) throw errors.invalidAdminKey();
  };
}

/** Whether `candidate` is the admin key (constant-time): the dashboard's one-time bootstrap. */
export function adminKeyMatches(adminKey: string, candidate: string): boolean {
  return timingSafeEqual(digest(candidate), digest(adminKey));
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
