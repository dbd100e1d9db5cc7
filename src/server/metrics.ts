/**
 * Prometheus metrics at GET /metrics: request counts and a latency histogram by route and status,
 * plus the process metrics prom-client collects. The route label is the registered pattern
 * (`/v1/models/*`), never the raw URL, and unknown paths share one label, so a client cannot grow
 * the label set. Each app has its own registry (tests run several apps in one process), in its
 * dependencies, where other modules add theirs (the request log writer's, pipeline/request-log.ts).
 */
import { getHeapStatistics } from 'node:v8';
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Histogram, type Registry } from 'prom-client';
import { databaseRoundTrips } from '../storage/round-trips.ts';

/** An unmatched path (404) or a pre-routing failure. */
const UNMATCHED_ROUTE = 'unmatched';

export function installMetrics(app: FastifyInstance, registry: Registry): void {
  collectDefaultMetrics({ register: registry, prefix: 'gateway_' });
  // Read when scraped, like the process metrics above: the count is the process's, kept by the
  // PostgreSQL client at one increment per statement.
  new Counter({
    name: 'gateway_database_round_trips_total',
    help: 'Statements this process has sent to PostgreSQL (each one round trip), whatever sent them; 0 on the embedded store.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(databaseRoundTrips.count);
    },
  });
  // What drives the young generation's collections (one per few megabytes allocated): read when
  // scraped, V8's own count since the process started.
  new Counter({
    name: 'gateway_nodejs_heap_allocated_bytes_total',
    help: 'Bytes allocated on the JavaScript heap since the process started (garbage included).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(getHeapStatistics().total_allocated_bytes);
    },
  });
  const labelNames = ['method', 'route', 'status'] as const;
  type LabelName = (typeof labelNames)[number];
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

  // The series of each (method, route, status), found once: prom-client hashes a label object on
  // every call otherwise, which was most of what a metric cost per request.
  const series = new Map<string, { readonly count: Counter.Internal; readonly duration: Histogram.Internal<LabelName> }>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE);
    const key = `${request.method} ${route} ${reply.statusCode}`;
    let found = series.get(key);
    if (found === undefined) {
      const labels = { method: request.method, route, status: String(reply.statusCode) };
      found = { count: requests.labels(labels), duration: duration.labels(labels) };
      series.set(key, found);
    }
    found.count.inc();
    found.duration.observe(reply.elapsedTime / 1000);
    done();
  });
}
