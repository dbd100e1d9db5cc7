/**
 * `GET /admin/v1/endpoints`: each provider endpoint's breaker (shared by every instance with Redis)
 * and what this instance observed of it (docs/operations.md, "Circuit breakers"). `gateway
 * endpoints` prints the same rows.
 */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../http/deps.ts';
import type { EndpointReport } from '../routing/endpoint-health.ts';
import type { SampleRing } from '../routing/endpoint-stats.ts';

export function registerEndpoints(admin: FastifyInstance, deps: AppDeps): void {
  admin.get('/endpoints', async () => ({ object: 'list', data: (await deps.health.report()).map(endpointView) }));
}

const PERCENTILES = [50, 90, 99];

export function endpointView(report: EndpointReport) {
  const { view, stats } = report;
  return {
    object: 'endpoint',
    id: report.key,
    provider: report.provider,
    model: report.model,
    state: view.state,
    /** Failures over attempts in the breaker's window (0 with none). */
    failure_rate: view.requests === 0 ? 0 : Math.round((view.failures / view.requests) * 10_000) / 10_000,
    window: { requests: view.requests, failures: view.failures },
    /** Open: milliseconds until a probe may go; half-open: until the probe's claim lapses. */
    retry_in_ms: view.state === 'closed' ? null : Math.round(view.remainingMs),
    latency_ms: percentiles(stats.latencyMs),
    ttfb_ms: percentiles(stats.firstByteMs),
    throughput_tps: percentiles(stats.throughputTps),
    attempts: { succeeded: stats.succeeded, failed: stats.failed },
    last_error: stats.lastError && { code: stats.lastError.code, message: stats.lastError.message, at: Math.floor(stats.lastError.at / 1000) },
  };
}

function percentiles(ring: SampleRing): { p50: number; p90: number; p99: number; samples: number } | null {
  const values = ring.percentiles(PERCENTILES);
  if (values === undefined) return null;
  const [p50, p90, p99] = values.map((value) => Math.round(value * 10) / 10);
  return { p50, p90, p99, samples: ring.size };
}
