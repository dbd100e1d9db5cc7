/**
 * The server span of every request when tracing is on (docs/operations.md, "Tracing"): started on
 * arrival as a child of the client's `traceparent`, carried to the metered call as `request.trace`
 * (call-input.ts), and told when the response is over, whether it was written in full or its
 * connection closed first. With tracing off no hook is installed and `request.trace` stays undefined.
 */
import type { FastifyInstance } from 'fastify';
import type { RequestTrace, Tracing } from '../telemetry/tracing.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's span; undefined when tracing is off. */
    trace: RequestTrace | undefined;
  }
}

export function installRequestTracing(app: FastifyInstance, tracing: Tracing | undefined): void {
  app.decorateRequest('trace', undefined);
  if (tracing === undefined) return;
  app.addHook('onRequest', (request, reply, done) => {
    const path = request.url.split('?', 1)[0];
    const trace = tracing.request(request.headers, request.method, request.is404 ? null : (request.routeOptions.url ?? null), path, request.id);
    request.trace = trace;
    // 'close' follows a response written in full as well as a connection closed before that.
    reply.raw.once('close', () => trace.responded(reply.statusCode));
    done();
  });
}
