import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { compileRouteSchemas } from '../../src/server/schema-compilers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { ROUTES_WITH_PROBES } from './probe-routes.ts';

describe('service endpoints (no API key needed)', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({ routes: ROUTES_WITH_PROBES, adminKey: 'admin-secret-for-tests' });
  });
  after(() => gateway.close());

  test("every route's request and response schemas compile (each is otherwise compiled on its first use)", () => {
    // First in the file: only the routes this process has called are compiled yet.
    assert.ok(compileRouteSchemas() > 20, 'the routes of a whole gateway wait to be compiled');
    assert.equal(compileRouteSchemas(), 0, 'each compiled once');
  });

  test('GET /healthz checks the store', async () => {
    const response = await call(gateway.app, 'GET', '/healthz');
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { status: 'ok', store: 'sqlite' });
    assert.match(response.headers.get('x-gateway-request-id') ?? '', /^req_/);
  });

  test('GET /metrics counts requests by route pattern and status, not by raw URL', async () => {
    await call(gateway.app, 'GET', '/v1/probe/chat', { key: gateway.apiKey });
    await call(gateway.app, 'GET', '/v1/probe/chat');
    for (let index = 0; index < 3; index++) await call(gateway.app, 'GET', `/no/such/path/${index}`);
    await call(gateway.app, 'GET', '/admin/v1/accounts/acct_any', { key: 'admin-secret-for-tests' });
    const response = await call(gateway.app, 'GET', '/metrics');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    const metrics = response.text;
    assert.match(metrics, /gateway_http_requests_total\{method="GET",route="\/v1\/probe\/chat",status="200"\} 1/);
    assert.match(metrics, /gateway_http_requests_total\{method="GET",route="\/v1\/probe\/chat",status="401"\} 1/);
    assert.match(metrics, /gateway_http_requests_total\{method="GET",route="unmatched",status="404"\} 3/);
    assert.match(metrics, /route="\/admin\/v1\/accounts\/:id",status="404"/);
    assert.doesNotMatch(metrics, /no\/such\/path|acct_any/);
    assert.match(metrics, /gateway_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/v1\/probe\/chat",status="200"\}/);
    assert.match(metrics, /gateway_process_resident_memory_bytes/);
    const allocated = Number(/^gateway_nodejs_heap_allocated_bytes_total (\d+)$/m.exec(metrics)?.[1]);
    assert.ok(allocated > 0);
  });

  test('GET /metrics?name=… collects only the metrics named, and skips names that are none', async (t) => {
    // The backlog's gauges count in the store: a read that does not name them must not count.
    const counting = t.mock.method(gateway.store, 'countWaitingJobs');
    await call(gateway.app, 'GET', '/v1/probe/chat', { key: gateway.apiKey });
    const one = await call(gateway.baseUrl, 'GET', '/metrics?name=gateway_http_requests_total');
    assert.equal(one.status, 200);
    assert.match(one.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(one.text, /^# HELP gateway_http_requests_total /);
    assert.match(one.text, /gateway_http_requests_total\{method="GET",route="\/v1\/probe\/chat",status="200"\} \d+\n/);
    assert.deepEqual(metricNames(one.text), ['gateway_http_requests_total']);
    assert.equal(counting.mock.callCount(), 0, 'the backlog was not counted');
    await call(gateway.baseUrl, 'GET', '/metrics');
    assert.ok(counting.mock.callCount() > 0, 'a whole scrape counts it');
    const two = await call(gateway.baseUrl, 'GET', '/metrics?name=gateway_database_round_trips_total&name=no_such_metric&name=gateway_jobs_queued');
    assert.deepEqual(metricNames(two.text), ['gateway_database_round_trips_total', 'gateway_jobs_queued']);
    assert.equal((await call(gateway.baseUrl, 'GET', '/metrics?name=no_such_metric')).text, '');
  });

  test('GET /openapi.json: OpenAPI 3.1, version 1.0.0, /v1 routes with their schemas and the key schemes', async () => {
    const response = await call(gateway.app, 'GET', '/openapi.json');
    assert.equal(response.status, 200);
    const document = response.body;
    assert.equal(document.openapi, '3.1.0');
    assert.equal(document.info.version, '1.0.0');
    assert.deepEqual(document.components.securitySchemes.bearerAuth, {
      type: 'http',
      scheme: 'bearer',
      description: document.components.securitySchemes.bearerAuth.description,
    });
    assert.equal(document.components.securitySchemes.apiKeyHeader.name, 'x-api-key');
    // The schema that validates the probe body is the one described.
    const echo = document.paths['/v1/probe/echo'].post.requestBody.content['application/json'].schema;
    assert.deepEqual(echo.required, ['count']);
    assert.equal(echo.properties.count.type, 'integer');
    // A catch-all segment is described under the name the API reference gives it.
    assert.equal(document.paths['/v1/models/{model}'].get.parameters[0].name, 'model');
    assert.doesNotMatch(JSON.stringify(Object.keys(document.paths)), /\{\*\}/);
    // Only the customer API is described.
    for (const path of Object.keys(document.paths)) assert.match(path, /^\/v1\//);
  });
});

/** The metrics a Prometheus text describes, by their TYPE lines. */
function metricNames(text: string): string[] {
  return [...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]!);
}
