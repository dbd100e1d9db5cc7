import type { FastifyInstance } from 'fastify';
import { timeOrderedId } from '../core/ids.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The gateway request id (`x-gateway-request-id`), also the key of GET /v1/outputs/{id}. */
    gatewayRequestId: string;
  }
}

/** Every response carries `x-gateway-request-id`, errors and 404s included. */
export function installRequestIds(app: FastifyInstance): void {
  app.decorateRequest('gatewayRequestId', '');
  app.addHook('onRequest', (request, reply, done) => {
    request.gatewayRequestId = timeOrderedId('req');
    reply.header('x-gateway-request-id', request.gatewayRequestId);
    done();
  });
}
