/**
 * Routing over real HTTP: the order `provider.sort` gives, provider fallback on retryable failures
 * only while nothing reached the client, `allow_fallbacks: false`, and the refund of a failed call.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { registerChatRoutes } from '../../src/dialects/chat/route.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import { implement, provides } from '../../src/protocols/capability.ts';
import { CHAT } from '../../src/protocols/protocol.ts';
import type { AppDeps } from '../../src/http/deps.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { endpoint, ledger, model, newCharges, simulatedConfig } from '../chat/helpers.ts';
import { scriptedProtocol } from './scripted-protocol.ts';

const price = (input: number, output: number) => ({ unit: 'per_1m_tokens' as const, input_per_1m: input, output_per_1m: output });

const config = simulatedConfig([
  // Price sums 5, 3, 3, 4; latency 300, 100, 200, none; throughput 50, 10, 90, 70.
  model('gateway/sorted', [
    endpoint('route-a', { pricing: price(1, 4), latency_ms: 300, throughput_tps: 50 }),
    endpoint('route-b', { pricing: price(1, 2), latency_ms: 100, throughput_tps: 10 }),
    endpoint('route-c', { pricing: price(2, 1), latency_ms: 200, throughput_tps: 90 }),
    endpoint('route-d', { pricing: price(2, 2), throughput_tps: 70 }),
  ]),
  model('gateway/flaky', [
    endpoint('fail-503', { pricing: price(1, 1) }),
    endpoint('fail-429', { pricing: price(1, 2) }),
    endpoint('healthy', { pricing: price(1, 3) }),
  ]),
  model('gateway/refusing', [endpoint('fail-400', { pricing: price(1, 1) }), endpoint('healthy', { pricing: price(1, 3) })]),
  model('gateway/down', [endpoint('fail-503')]),
  model('gateway/late-start', [endpoint('start-then-503', { pricing: price(1, 1) }), endpoint('healthy', { pricing: price(1, 3) })]),
  model('gateway/mid-stream', [endpoint('break-after-text', { pricing: price(1, 1) }), endpoint('healthy', { pricing: price(1, 3) })]),
]);

describe('routing and provider fallback', () => {
  const protocol = scriptedProtocol();
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({
      config,
      routes: [
        (app: FastifyInstance, deps: AppDeps) =>
          registerChatRoutes(app, deps, new Pipeline(deps, { protocols: { simulated: provides(implement(CHAT, protocol)) } })),
      ],
    });
  });
  after(() => gateway.close());
  beforeEach(() => {
    protocol.calls.length = 0;
  });

  const post = (body: Record<string, unknown>) =>
    call(gateway.baseUrl, 'POST', '/v1/chat/completions', { key: gateway.apiKey, json: { messages: [{ role: 'user', content: 'hi' }], ...body } });

  test('sort: price by default (ties in config order), latency ascending, throughput descending', async () => {
    const served = async (provider?: Record<string, unknown>) => {
      protocol.calls.length = 0;
      const response = await post({ model: 'gateway/sorted', ...(provider ? { provider } : {}) });
      assert.equal(response.status, 200, response.text);
      return protocol.calls[0];
    };
    assert.equal(await served(), 'route-b');
    assert.equal(await served({ sort: 'price' }), 'route-b');
    assert.equal(await served({ sort: 'latency' }), 'route-b');
    assert.equal(await served({ sort: 'throughput' }), 'route-c');
    // `gateway.provider` says the same as the top-level `provider`.
    protocol.calls.length = 0;
    await post({ model: 'gateway/sorted', gateway: { provider: { sort: 'throughput' } } });
    assert.equal(protocol.calls[0], 'route-c');
  });

  test('a 503 and a 429 fall through to the next route; the charge is the serving route’s', async () => {
    const before = await ledger(gateway);
    const response = await post({ model: 'gateway/flaky' });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(protocol.calls, ['fail-503', 'fail-429', 'healthy']);
    assert.match(response.body.choices[0].message.content, /simulated reply from healthy/);
    const charges = await newCharges(gateway, before);
    assert.equal(charges.length, 1);
    const usage = response.body.usage;
    assert.equal(charges[0].amount, BigInt(usage.prompt_tokens) * 1_000_000n + BigInt(usage.completion_tokens) * 3_000_000n);
  });

  test('allow_fallbacks false: the first failure is the answer, and the reservation is returned', async () => {
    const before = await ledger(gateway);
    const response = await post({ model: 'gateway/flaky', provider: { allow_fallbacks: false } });
    assertError(response, { status: 503, type: 'api_error', code: 'upstream_unavailable' });
    assert.deepEqual(protocol.calls, ['fail-503']);
    const after = await ledger(gateway);
    assert.deepEqual(after, before);
  });

  test('a non-retryable upstream error does not fall back', async () => {
    const response = await post({ model: 'gateway/refusing' });
    assertError(response, { status: 400, type: 'invalid_request_error' });
    assert.deepEqual(protocol.calls, ['fail-400']);
  });

  test('a model whose only route fails returns that error, streaming or not', async () => {
    assertError(await post({ model: 'gateway/down' }), { status: 503, type: 'api_error', code: 'upstream_unavailable' });
    assertError(await post({ model: 'gateway/down', stream: true }), { status: 503, type: 'api_error', code: 'upstream_unavailable' });
    assert.equal((await ledger(gateway)).balance.reserved, 0n);
  });

  test('streams fall back before the first event: a failed connect, and a start followed by an error', async () => {
    const flaky = await post({ model: 'gateway/flaky', stream: true });
    assert.equal(flaky.status, 200);
    assert.deepEqual(protocol.calls, ['fail-503', 'fail-429', 'healthy']);
    assert.match(flaky.text, /reply from healthy/);
    protocol.calls.length = 0;
    const late = await post({ model: 'gateway/late-start', stream: true });
    assert.equal(late.status, 200);
    assert.deepEqual(protocol.calls, ['start-then-503', 'healthy']);
    assert.match(late.text, /data: \[DONE\]/);
  });

  test('after output reached the client there is no fallback: one error event ends the stream', async () => {
    const before = await ledger(gateway);
    const response = await post({ model: 'gateway/mid-stream', stream: true, stream_options: { include_usage: true } });
    assert.equal(response.status, 200);
    assert.deepEqual(protocol.calls, ['break-after-text']);
    const events = response.text
      .split('\n\n')
      .filter(Boolean)
      .map((event) => event.replace(/^data: /, ''));
    assert.ok(events.some((event) => event.includes('partial answer')));
    const last = JSON.parse(events.at(-1)!);
    assert.deepEqual(Object.keys(last), ['error']);
    assert.equal(last.error.type, 'api_error');
    assert.ok(!response.text.includes('[DONE]'));
    // What was produced is charged once (docs/billing.md: cut-off streams).
    const charges = await newCharges(gateway, before);
    assert.equal(charges.length, 1);
    assert.equal((await ledger(gateway)).balance.reserved, 0n);
  });
});
