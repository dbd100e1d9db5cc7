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

  // `?name=…` (repeatable) collects only the metrics named: a poller that reads a counter or two
  // does not make every gauge collect, some of which count in the database (the jobs backlog).
  app.get<{ Querystring: { name?: string | string[] } }>('/metrics', async (request, reply) => {
    reply.type(metrics.contentType);
    const { name } = request.query;
    if (name === undefined) return metrics.metrics();
    const named = (Array.isArray(name) ? name : [name]).filter((each) => metrics.getSingleMetric(each) !== undefined);
    return (await Promise.all(named.map((each) => metrics.getSingleMetricAsString(each)))).map((text) => `${text}\n`).join('');
  });

  app.get('/openapi.json', async () => app.swagger());
}
