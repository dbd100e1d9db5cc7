/**
 * Unauthenticated service endpoints: health for load balancers, metrics for Prometheus and the
 * OpenAPI description. They reveal no account data.
 */
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { errors } from '../core/errors.ts';
import { type Drain, HEALTH_PATH } from '../http/drain.ts';
import type { Store } from '../storage/store.ts';
import { sendError } from './error-handling.ts';

export function registerServiceRoutes(app: FastifyInstance, store: Store, metrics: Registry, drain: Drain): void {
  app.get(HEALTH_PATH, async (request, reply) => {
    if (drain.draining) return reply.code(503).send({ status: 'draining', store: store.engine });
    try {
      // The cheapest query every engine answers: proves the database is reachable.
      await store.currentVersion();
    } catch (error) {
      request.log.warn({ err: error }, 'health check: store unavailable');
      return sendError(reply, errors.storeProbeFailed());
    }
    return { status: 'ok', store: store.engine };
  });

  app.get('/metrics', async (_request, reply) => {
    reply.type(metrics.contentType);
    return metrics.metrics();
  });

  app.get('/openapi.json', async () => app.swagger());
}
