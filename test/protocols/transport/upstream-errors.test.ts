import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getJson, postJson } from '../../../src/protocols/transport/json-call.ts';
import { closeUpstreamPools } from '../../../src/protocols/transport/pools.ts';
import { parseRetryAfter, upstreamStatusError } from '../../../src/protocols/transport/upstream-errors.ts';
import { parseChatError } from '../../../src/protocols/openai-chat/errors.ts';
import { startSimulator, type Simulator } from '../../simulators/harness.ts';

describe('upstream status → gateway error (docs/protocols.md, Upstream errors)', () => {
  const rows: [number, number, string, boolean][] = [
    [400, 400, 'upstream_error', false],
    [401, 502, 'upstream_error', false],
    [403, 502, 'upstream_error', false],
    [404, 502, 'upstream_error', false],
    [408, 502, 'upstream_timeout', true],
    [409, 502, 'upstream_error', true],
    [413, 413, 'request_too_large', false],
    [422, 400, 'upstream_error', false],
    [429, 429, 'upstream_rate_limited', true],
    [500, 502, 'upstream_error', true],
    [502, 502, 'upstream_error', true],
    [503, 503, 'upstream_unavailable', true],
    [504, 502, 'upstream_timeout', true],
    [529, 503, 'upstream_unavailable', true],
  ];
  for (const [upstream, status, code, retryable] of rows) {
    test(`${upstream} → ${status} ${code}${retryable ? ' (retryable)' : ''}`, () => {
      const error = upstreamStatusError({ status: upstream, headers: {} });
      assert.deepEqual([error.status, error.code, error.retryable], [status, code, retryable]);
    });
  }

  test('retry-after: seconds, milliseconds, HTTP date, garbage', () => {
    assert.equal(parseRetryAfter({ 'retry-after': '3' }), 3);
    assert.equal(parseRetryAfter({ 'retry-after-ms': '250', 'retry-after': '9' }), 1);
    const now = Date.parse('2025-01-01T00:00:00Z');
    assert.equal(parseRetryAfter({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }, now), 30);
    assert.equal(parseRetryAfter({ 'retry-after': 'soon' }), undefined);
    assert.equal(parseRetryAfter({}), undefined);
  });
});

describe('postJson / getJson', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startSimulator({
      handle: (request, reply) => reply.json(200, { method: request.method, path: request.path, got: request.body ?? null }),
      errorBody: (_status, message) => ({ error: { message, type: 'server_error' } }),
      streamErrorEvent: (message) => ({ data: { error: { message } } }),
    });
  });
  after(async () => {
    await sim.close();
    await closeUpstreamPools();
  });
  const options = () => ({ headers: { authorization: 'Bearer k' }, signal: new AbortController().signal, parseError: parseChatError });

  test('round trips JSON', async () => {
    const posted = await postJson(`${sim.origin}/v1/images?x=1`, { prompt: 'cat' }, options());
    assert.deepEqual(posted.body, { method: 'POST', path: '/v1/images?x=1', got: { prompt: 'cat' } });
    assert.equal(sim.requests.at(-1)!.headers['content-type'], 'application/json');
    const fetched = await getJson(`${sim.origin}/v1/jobs/1`, options());
    assert.deepEqual(fetched.body, { method: 'GET', path: '/v1/jobs/1', got: null });
  });

  test("non-2xx goes through the protocol's error mapping", async () => {
    sim.enqueue({ kind: 'status', status: 503, headers: { 'retry-after': '2' } });
    await assert.rejects(getJson(`${sim.origin}/v1/jobs/1`, options()), { status: 503, retryable: true, retryAfterSeconds: 2 });
  });
});
