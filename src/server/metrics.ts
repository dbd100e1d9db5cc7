/**
 * Prometheus metrics at GET /metrics: request counts and a latency histogram by route and status,
 * plus the process metrics prom-client collects. The route label is the registered pattern
 * (`/v1/models/*`), never the raw URL, and unknown paths share one label, so a client cannot grow
 * the label set. Each app has its own registry (tests run several apps in one process).
 */
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** An unmatched path (404) or a pre-routing failure. */
const UNMATCHED_ROUTE = 'unmatched';

export function installMetrics(app: FastifyInstance): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gateway_' });
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'gateway_http_requests_total',
    help: 'HTTP requests served, by method, route pattern and status code.',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'Time from request start to response end (for streams: to the last byte), by method, route pattern and status code.',
    labelNames,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [registry],
  });

  app.addHook('onResponse', (request, reply, done) => {
    const labels = {
      method: request.method,
      route: request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE),
      status: String(reply.statusCode),
    };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
  return registry;
}
