import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { timeOrderedId } from '../core/ids.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The gateway request id (`x-gateway-request-id`), also the key of GET /v1/outputs/{id}. */
    gatewayRequestId: string;
  }
}

/** Time-ordered, so stored request rows insert at the end of their index. Also Fastify's `request.id`. */
export function newRequestId(): string {
  return timeOrderedId('req');
}

/** Every response carries `x-gateway-request-id`, errors and 404s included. */
export function installRequestIds(app: FastifyInstance): void {
  app.decorateRequest('gatewayRequestId', '');
  app.addHook('onRequest', (request, reply, done) => {
    ensureRequestId(request, reply);
    done();
  });
}

/** Sets the header once (framework errors arrive before the onRequest hook and call this directly). */
export function ensureRequestId(request: FastifyRequest, reply: FastifyReply): void {
  if (request.gatewayRequestId) return;
  request.gatewayRequestId = request.id;
  reply.header('x-gateway-request-id', request.id);
}
