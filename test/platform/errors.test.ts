/**
 * Every framework error path answers with the error envelope, the status → type mapping of
 * docs/errors.md and an x-gateway-request-id header, over real HTTP.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { DEMO_CONFIG_PATH, loadConfigFile } from '../../src/config/load.ts';
import { closeUpstreamPools } from '../../src/protocols/transport/pools.ts';
import { createRuntime } from '../../src/server/compose.ts';
import { eventually } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import { startOpenAIChatSimulator } from '../simulators/openai-chat.ts';
import { ROUTES_WITH_PROBES } from './probe-routes.ts';

describe('error envelope for framework errors', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({ routes: ROUTES_WITH_PROBES });
  });
  after(() => gateway.close());

  const post = (body: string, contentType = 'application/json') =>
    call(gateway.baseUrl, 'POST', '/v1/probe/echo', { body, headers: { 'content-type': contentType } });

  test('a valid request passes through (control)', async () => {
    const response = await post('{"count":2}');
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { count: 2 });
    assert.match(response.headers.get('x-gateway-request-id') ?? '', /^req_/);
  });

  test('malformed JSON is 400 invalid_json', async () => {
    assertError(await post('{"count":'), { status: 400, type: 'invalid_request_error', code: 'invalid_json', param: null });
  });

  test('prototype poisoning in JSON is refused with 400', async () => {
    assertError(await post('{"count":1,"__proto__":{"admin":true}}'), { status: 400, type: 'invalid_request_error' });
  });

  test('a content type other than JSON is 415 unsupported_media_type', async () => {
    assertError(await post('count=1', 'application/x-www-form-urlencoded'), {
      status: 415,
      type: 'invalid_request_error',
      code: 'unsupported_media_type',
    });
    assertError(await post('hello', 'text/plain'), { status: 415, type: 'invalid_request_error', code: 'unsupported_media_type' });
  });

  test('a body over the limit is 413 request_too_large', async () => {
    const big = JSON.stringify({ count: 1, padding: 'x'.repeat(6 * 1024 * 1024) });
    assertError(await post(big), { status: 413, type: 'invalid_request_error', code: 'request_too_large' });
  });

  test('validation failures are 400 naming the field', async () => {
    assertError(await post('{}'), { status: 400, type: 'invalid_request_error', code: 'missing_required_parameter', param: 'count' });
    // A number sent as a string is not coerced.
    assertError(await post('{"count":"2"}'), { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'count' });
    assertError(await post('{"count":1,"nested":{"flag":"yes"}}'), { status: 400, type: 'invalid_request_error', param: 'nested.flag' });
    assertError(await post('{"count":1,"extra":true}'), { status: 400, type: 'invalid_request_error', param: 'extra' });
    assertError(await post('[1,2]'), { status: 400, type: 'invalid_request_error', code: 'invalid_value' });
    assertError(await post(''), { status: 400, type: 'invalid_request_error' });
  });

  test('an unknown route is 404 not_found', async () => {
    assertError(await call(gateway.baseUrl, 'GET', '/v1/nothing-here'), { status: 404, type: 'invalid_request_error', code: 'not_found' });
    assertError(await call(gateway.baseUrl, 'POST', '/nothing', { json: {} }), { status: 404, type: 'invalid_request_error', code: 'not_found' });
  });

  test('a known route with another method is 405 method_not_allowed with Allow', async () => {
    const response = await call(gateway.baseUrl, 'DELETE', '/v1/probe/echo');
    assertError(response, { status: 405, type: 'invalid_request_error', code: 'method_not_allowed' });
    assert.equal(response.headers.get('allow'), 'POST');
    const withBody = await call(gateway.baseUrl, 'PUT', '/v1/probe/echo', { json: { count: 1 } });
    assertError(withBody, { status: 405, type: 'invalid_request_error', code: 'method_not_allowed' });
  });

  test('a URL that cannot be decoded is 400', async () => {
    assertError(await call(gateway.baseUrl, 'GET', '/v1/probe/%E0%A4%A'), { status: 400, type: 'invalid_request_error' });
  });

  test('a path parameter over the router limit (100 characters) is 400 invalid_value, not a 414', async () => {
    // The admin API has the only `:id` parameters; it answers only when switched on.
    const withAdmin = await startGateway({ adminKey: 'admin-secret-for-tests' });
    try {
      const response = await call(withAdmin.baseUrl, 'GET', `/admin/v1/accounts/${'a'.repeat(101)}`);
      assertError(response, { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: null });
      assert.equal(response.body.error.message, 'A path segment (such as an id) is longer than 100 characters.');
    } finally {
      await withAdmin.close();
    }
  });

  test('an unexpected exception is 500 api_error without internals', async () => {
    const response = await call(gateway.baseUrl, 'POST', '/v1/probe/crash', { json: {} });
    assertError(response, { status: 500, type: 'api_error', code: 'internal_error' });
    assert.doesNotMatch(response.text, /secret|sqlite|at .*\.ts/);
    assert.equal(response.headers.get('x-should-retry'), 'false');
  });

  /** Writes raw bytes and returns everything the server answers before closing. */
  const raw = (request: string) =>
    new Promise<string>((resolve, reject) => {
      const url = new URL(gateway.baseUrl);
      const socket = connect(Number(url.port), url.hostname, () => socket.write(request));
      let received = '';
      socket.on('data', (chunk) => (received += chunk));
      // The server may close while the rest of an oversized request is still being written.
      socket.on('error', (error) => (received ? resolve(received) : reject(error)));
      socket.on('close', () => resolve(received));
    });
  const rawEnvelope = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
  const rawRequestId = (answer: string) => answer.slice(0, answer.indexOf('\r\n\r\n')).match(/\r\nx-gateway-request-id: (\S*)/i)?.[1];

  test('malformed HTTP still gets an envelope', async () => {
    const answer = await raw('GARBAGE / HTTP/1.1\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.equal(rawEnvelope(answer).error.type, 'invalid_request_error');
    assert.match(rawRequestId(answer) ?? '', /^req_[0-9a-z]+$/);
  });

  test('oversized headers are 431 with an envelope', async () => {
    const answer = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
    assert.match(answer, /^HTTP\/1\.1 431 /);
    assert.equal(rawEnvelope(answer).error.code, 'request_too_large');
    assert.match(rawRequestId(answer) ?? '', /^req_[0-9a-z]+$/);
  });
});

describe('logging of failures', () => {
  // The test helper's logger is silent; this gateway logs into memory so the line can be read back.
  test('a 500 is logged with the request id the client saw', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info', base: undefined }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const dataDir = await mkdtemp(join(tmpdir(), 'gateway-test-'));
    try {
      const runtime = await createRuntime({
        config: loadConfigFile(DEMO_CONFIG_PATH),
        storage: { dataDir, databaseUrl: undefined },
        env: {},
        logger,
        routes: ROUTES_WITH_PROBES,
      });
      try {
        const baseUrl = await runtime.listen('127.0.0.1', 0);
        const response = await call(baseUrl, 'POST', '/v1/probe/crash', { json: {} });
        assertError(response, { status: 500, type: 'api_error', code: 'internal_error' });
        const failures = lines.filter((line) => line.msg === 'request failed');
        assert.equal(failures.length, 1, JSON.stringify(lines));
        assert.equal(failures[0].requestId, response.headers.get('x-gateway-request-id'));
        assert.equal(failures[0].level, 50);
      } finally {
        await runtime.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  test('a client that leaves while the upstream answers is logged at info, not as a failure', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info', base: undefined }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const upstream = await startOpenAIChatSimulator();
    const gateway = await startGateway({
      logger,
      config: chatModelsConfig({ 'gateway/slow': [{ id: 'slow', kind: 'openai', baseUrl: upstream.baseUrl }] }),
    });
    try {
      upstream.enqueue({ kind: 'delay', ms: 5_000 });
      const client = new AbortController();
      const answer = fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gateway/slow', messages: [{ role: 'user', content: 'never mind' }] }),
        signal: client.signal,
      });
      await eventually(async () => assert.equal(upstream.requests.length, 1));
      client.abort();
      await assert.rejects(answer, { name: 'AbortError' });
      await eventually(async () =>
        assert.ok(
          lines.some((line) => line.msg === 'client closed the connection before the answer'),
          JSON.stringify(lines),
        ),
      );
      const left = lines.find((line) => line.msg === 'client closed the connection before the answer')!;
      assert.equal(left.level, 30);
      assert.equal(left.err, undefined, 'no error object, no stack');
      assert.equal(lines.filter((line) => (line.level as number) >= 50).length, 0, JSON.stringify(lines));
    } finally {
      await gateway.close();
      await upstream.close();
      await closeUpstreamPools();
    }
  });
});
