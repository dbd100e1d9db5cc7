/**
 * Where an operator sees endpoint health: GET /admin/v1/endpoints (every endpoint of the config,
 * with what was observed of those used), /metrics, and `gateway endpoints`, which asks a running
 * server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../../src/cli/run.ts';
import { endpointKeys } from '../../src/routing/endpoint-health.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';

const ADMIN_KEY = 'admin-key-for-endpoint-reports';

describe('endpoint health reports', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({ adminKey: ADMIN_KEY });
    for (const stream of [false, true]) {
      const answer = await call(gateway.app, 'POST', '/v1/chat/completions', {
        key: gateway.apiKey,
        json: { model: 'gateway/quill-1-free', stream, messages: [{ role: 'user', content: 'hello' }] },
      });
      assert.equal(answer.status, 200, answer.text);
    }
  });
  after(() => gateway.close());

  test('GET /admin/v1/endpoints lists every endpoint of the config, with what was observed of the one used', async () => {
    const listed = await call(gateway.app, 'GET', '/admin/v1/endpoints', { key: ADMIN_KEY });
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(listed.body.data.map((row: { id: string }) => row.id).sort(), [...new Set(endpointKeys(gateway.deps.config))].sort());
    const used = listed.body.data.find((row: { id: string }) => row.id === 'sim-first:sim-quill-1');
    assert.equal(used.state, 'closed');
    assert.deepEqual(used.attempts, { succeeded: 2, failed: 0 });
    assert.equal(used.latency_ms.samples, 2);
    assert.equal(used.ttfb_ms.samples, 2);
    assert.ok(used.latency_ms.p50 >= 0 && used.latency_ms.p99 >= used.latency_ms.p50);
    assert.equal(used.last_error, null);
    const unused = listed.body.data.find((row: { id: string }) => row.id === 'sim-first:sim-reel-3');
    assert.deepEqual({ state: unused.state, latency: unused.latency_ms, retry: unused.retry_in_ms }, { state: 'closed', latency: null, retry: null });
    assert.equal((await call(gateway.app, 'GET', '/admin/v1/endpoints', { key: gateway.apiKey })).status, 401, 'never with a customer key');
  });

  test('/metrics has each breaker’s state and the attempts by outcome', async () => {
    const metrics = (await call(gateway.app, 'GET', '/metrics')).text;
    assert.match(metrics, /gateway_breaker_state\{endpoint="sim-first:sim-quill-1"\} 0/);
    assert.match(metrics, /gateway_upstream_attempts_total\{endpoint="sim-first:sim-quill-1",outcome="success"\} 2/);
  });

  test('`gateway endpoints` prints the same rows from the running server', async () => {
    let stdout = '';
    let stderr = '';
    const io = { env: { GATEWAY_ADMIN_KEY: ADMIN_KEY }, stdout: (text: string) => (stdout += text), stderr: (text: string) => (stderr += text) };
    assert.equal(await runCli(['endpoints', '--url', gateway.baseUrl], io), 0, stderr);
    assert.match(stdout, /sim-first:sim-quill-1\s+closed\s+0\s+2\s+[\d.]+\s+[\d.]+\s+-/);
    stdout = '';
    assert.equal(await runCli(['endpoints', '--url', gateway.baseUrl, '--json'], io), 0, stderr);
    assert.equal(JSON.parse(stdout).object, 'list');
    assert.equal(await runCli(['endpoints', '--url', gateway.baseUrl], { ...io, env: {} }), 2, 'without the admin key');
    assert.match(stderr, /GATEWAY_ADMIN_KEY/);
  });
});
