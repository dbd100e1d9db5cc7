/**
 * `provider.sort` by latency or throughput (src/routing/plan.ts): the configured figures until an
 * endpoint has enough observed samples, then what this instance observed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildCatalog } from '../../src/catalog/catalog.ts';
import type { RouteEndpoint } from '../../src/catalog/types.ts';
import { type ObservedFigures, orderRoutes } from '../../src/routing/plan.ts';
import { CONSENT, config, endpoint, model } from '../catalog/builders.ts';

const routes = buildCatalog(
  config([
    model('gateway/sorted', [
      endpoint({ provider: 'p1', model: 'fast-on-paper', latency_ms: 100, throughput_tps: 90 }),
      endpoint({ provider: 'p2', model: 'slow-on-paper', latency_ms: 400, throughput_tps: 30 }),
    ]),
  ]),
).routes('gateway/sorted', CONSENT.all);

const keys = (ordered: readonly RouteEndpoint[]) => ordered.map((route) => route.upstreamModel);

/** Observed figures for some endpoints (those with enough samples), by upstream model. */
function observed(figures: Record<string, { latencyMs?: number; throughputTps?: number }>): ObservedFigures {
  return { observed: (route) => figures[route.upstreamModel] ?? {} };
}

describe('sort by observed figures', () => {
  test('without observations, the configured latency and throughput decide', () => {
    assert.deepEqual(keys(orderRoutes(routes, 'latency', observed({}))), ['fast-on-paper', 'slow-on-paper']);
    assert.deepEqual(keys(orderRoutes(routes, 'throughput', observed({}))), ['fast-on-paper', 'slow-on-paper']);
  });

  test('an endpoint observed slower than the other is configured moves behind it', () => {
    const figures = observed({ 'fast-on-paper': { latencyMs: 900, throughputTps: 10 } });
    assert.deepEqual(keys(orderRoutes(routes, 'latency', figures)), ['slow-on-paper', 'fast-on-paper']);
    assert.deepEqual(keys(orderRoutes(routes, 'throughput', figures)), ['slow-on-paper', 'fast-on-paper']);
  });

  test('sorting by price ignores observations, and the routes handed back are the catalog’s own', () => {
    const figures = observed({ 'fast-on-paper': { latencyMs: 900 } });
    const ordered = orderRoutes(routes, 'price', figures);
    assert.deepEqual(keys(ordered), ['fast-on-paper', 'slow-on-paper']);
    assert.equal(orderRoutes(routes, 'latency', figures)[1], routes[0]);
  });
});
