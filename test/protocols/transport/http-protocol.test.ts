import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CanonicalRequest, StreamBatch, StreamEvent } from '../../../src/canonical/index.ts';
import { errors, GatewayError } from '../../../src/core/errors.ts';
import { httpChatProtocol } from '../../../src/protocols/http-protocol.ts';
import { openAIChatTranslator } from '../../../src/protocols/openai-chat/index.ts';
import type { HttpChatTranslator, StreamDecoderOptions } from '../../../src/protocols/protocol.ts';
import { protocolsDecoding } from '../../../src/protocols/registry.ts';
import { openAIResponsesTranslator } from '../../../src/protocols/openai-responses/index.ts';
import { postJson } from '../../../src/protocols/transport/json-call.ts';
import { closeUpstreamPools } from '../../../src/protocols/transport/pools.ts';
import { callContext, simulatorEndpoint } from '../../simulators/endpoint.ts';
import { collect } from '../helpers.ts';
import { comparable } from '../../simulators/fixtures.ts';
import { startOpenAIChatSimulator, type OpenAIChatSimulator } from '../../simulators/openai-chat.ts';
import { startOpenAIResponsesSimulator, type OpenAIResponsesSimulator } from '../../simulators/openai-responses.ts';

const openAIChatProtocol = httpChatProtocol(openAIChatTranslator);
const openAIResponsesProtocol = httpChatProtocol(openAIResponsesTranslator);

const request: CanonicalRequest = {
  dialect: 'chat',
  model: 'm',
  fallbackModels: [],
  system: [],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'one two three four' }] }],
  stream: true,
};

/** The error a promise rejects with (asserting it is a GatewayError). */
async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof GatewayError, `expected a GatewayError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a failure');
}

describe('http chat protocol over the simulator harness', () => {
  let sim: OpenAIChatSimulator;
  const endpoint = (timeoutMs?: number) =>
    simulatorEndpoint({ kind: 'openai', base_url: sim.baseUrl, ...(timeoutMs !== undefined && { timeout_ms: timeoutMs }) });

  before(async () => {
    sim = await startOpenAIChatSimulator({ apiKey: 'sk-test' });
  });
  beforeEach(() => sim.setDefault({ kind: 'normal' }));
  after(async () => {
    await sim.close();
    await closeUpstreamPools();
  });

  test('a normal call carries the key and the request id', async () => {
    const result = await openAIChatProtocol.complete({ ...request, stream: false }, endpoint(), callContext({ requestId: 'req_abc' }));
    assert.deepEqual(result.content, [{ type: 'text', text: 'Echo: one two three four' }]);
    const recorded = sim.requests.at(-1)!;
    assert.equal(recorded.headers.authorization, 'Bearer sk-test');
    assert.equal(recorded.headers['x-request-id'], 'req_abc');
  });

  test('finished streams give their connection back for the next request', async () => {
    const before = sim.connectionsAccepted();
    for (let call = 0; call < 3; call++) {
      // Like the pipeline, stop reading at the finish event, before the upstream's `[DONE]` and end.
      let finished = false;
      for await (const batch of openAIChatProtocol.stream(request, endpoint(), callContext())) {
        if (!batch.some((event) => event.type === 'finish')) continue;
        finished = true;
        break;
      }
      assert.ok(finished);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(sim.connectionsAccepted() - before, 1);
  });

  test('500: retryable, thrown by complete and by the first next() of a stream', async () => {
    sim.enqueue({ kind: 'status', status: 500 }, { kind: 'status', status: 500 });
    const whole = await failure(openAIChatProtocol.complete(request, endpoint(), callContext()));
    assert.deepEqual([whole.status, whole.code, whole.retryable], [502, 'upstream_error', true]);
    const streamed = await failure(collect(openAIChatProtocol.stream(request, endpoint(), callContext())));
    assert.deepEqual([streamed.status, streamed.retryable], [502, true]);
    // The queue is spent: the next request is normal again.
    assert.equal((await openAIChatProtocol.complete(request, endpoint(), callContext())).finish.reason, 'stop');
  });

  test('429 with retry-after: retryable rate limit, wait parsed', async () => {
    sim.enqueue({ kind: 'status', status: 429, headers: { 'retry-after': '12' } });
    const error = await failure(openAIChatProtocol.complete(request, endpoint(), callContext()));
    assert.deepEqual([error.status, error.code, error.retryable, error.retryAfterSeconds], [429, 'upstream_rate_limited', true, 12]);
  });

  test('503 and 529 (overloaded) are retryable 503s', async () => {
    for (const status of [503, 529]) {
      sim.enqueue({ kind: 'status', status });
      const error = await failure(openAIChatProtocol.complete(request, endpoint(), callContext()));
      assert.deepEqual([error.status, error.code, error.retryable], [503, 'upstream_unavailable', true]);
    }
  });

  test('a wrong provider key is an operator problem: 502, not retryable', async () => {
    const error = await failure(openAIChatProtocol.complete(request, endpoint(), callContext({ apiKey: 'sk-wrong' })));
    assert.deepEqual([error.status, error.retryable], [502, false]);
  });

  test('timeout before headers: 502 upstream_timeout, retryable (complete and stream)', async () => {
    sim.enqueue({ kind: 'delay', ms: 5_000 }, { kind: 'delay', ms: 5_000 });
    const whole = await failure(openAIChatProtocol.complete(request, endpoint(100), callContext()));
    assert.deepEqual([whole.status, whole.code, whole.retryable], [502, 'upstream_timeout', true]);
    const streamed = await failure(collect(openAIChatProtocol.stream(request, endpoint(100), callContext())));
    assert.deepEqual([streamed.status, streamed.code], [502, 'upstream_timeout']);
  });

  test('connection refused: 502 upstream_unavailable, retryable', async () => {
    const closed = simulatorEndpoint({ kind: 'openai', base_url: 'http://127.0.0.1:1/v1' });
    const error = await failure(openAIChatProtocol.complete(request, closed, callContext()));
    assert.deepEqual([error.status, error.code, error.retryable], [502, 'upstream_unavailable', true]);
  });

  test('the caller aborting: a non-retryable failure (nothing to fall back to)', async () => {
    sim.enqueue({ kind: 'delay', ms: 5_000 });
    const controller = new AbortController();
    const pending = openAIChatProtocol.complete(request, endpoint(), callContext({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 20);
    const error = await failure(pending);
    assert.equal(error.retryable, false);
  });

  test('socket reset mid-stream: the events so far, then one error event', async () => {
    sim.enqueue({ kind: 'reset', afterEvents: 3 });
    const events = await collect(openAIChatProtocol.stream(request, endpoint(), callContext()));
    assert.deepEqual(
      events.slice(0, 3).map((event) => event.type),
      ['start', 'text-start', 'text-delta'],
    );
    const last = events.at(-1)!;
    assert.equal(last.type, 'error');
    assert.equal(last.type === 'error' && last.error.code, 'upstream_unavailable');
    assert.equal(events.filter((event) => event.type === 'error').length, 1);
  });

  test('socket reset before any event: thrown (routing may still fall back)', async () => {
    sim.enqueue({ kind: 'reset', afterEvents: 0 });
    const error = await failure(collect(openAIChatProtocol.stream(request, endpoint(), callContext())));
    assert.equal(error.retryable, true);
  });

  test('a malformed chunk mid-stream: an error event, no crash', async () => {
    sim.enqueue({ kind: 'malformed', afterEvents: 2 });
    const events = await collect(openAIChatProtocol.stream(request, endpoint(), callContext()));
    const last = events.at(-1)!;
    assert.equal(last.type, 'error');
    assert.match(last.type === 'error' ? last.error.message : '', /not valid JSON/);
  });

  test('a malformed first chunk is thrown', async () => {
    sim.enqueue({ kind: 'malformed', afterEvents: 0 });
    const error = await failure(collect(openAIChatProtocol.stream(request, endpoint(), callContext())));
    assert.equal(error.code, 'upstream_error');
  });

  test('a stream that ends without finish or [DONE]: an error event', async () => {
    sim.enqueue({ kind: 'truncate', afterEvents: 3 });
    const events = await collect(openAIChatProtocol.stream(request, endpoint(), callContext()));
    const last = events.at(-1)!;
    assert.equal(last.type, 'error');
    assert.match(last.type === 'error' ? last.error.message : '', /ended before/);
  });

  test("the provider's in-stream error chunk: an error event", async () => {
    sim.enqueue({ kind: 'stream-error', afterEvents: 2 });
    const events = await collect(openAIChatProtocol.stream(request, endpoint(), callContext()));
    assert.deepEqual(
      events.map((event) => event.type),
      ['start', 'text-start', 'text-delta', 'error'],
    );
  });

  test('a malformed JSON body on a non-streaming call: 502, retryable', async () => {
    sim.enqueue({ kind: 'malformed', afterEvents: 0 });
    const error = await failure(openAIChatProtocol.complete(request, endpoint(), callContext()));
    assert.deepEqual([error.status, error.code, error.retryable], [502, 'upstream_error', true]);
  });

  test('the events of one network read come as one batch; events written apart come apart', async () => {
    const batchesFrom = async (baseUrl: string) => {
      const batches: StreamBatch[] = [];
      for await (const batch of openAIChatProtocol.stream(request, simulatorEndpoint({ kind: 'openai', base_url: baseUrl }), callContext()))
        batches.push(batch);
      return batches;
    };
    // The simulator writes each event on its own; the same bytes, sent in one write, arrive in one read.
    const apart = await batchesFrom(sim.baseUrl);
    const wire = await (
      await fetch(`${sim.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'm',
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'one two three four' }],
        }),
      })
    ).text();
    const oneWrite = createServer((_incoming, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': Buffer.byteLength(wire) }).end(wire);
    });
    await new Promise<void>((resolve) => oneWrite.listen(0, '127.0.0.1', resolve));
    try {
      const together = await batchesFrom(`http://127.0.0.1:${(oneWrite.address() as AddressInfo).port}`);
      assert.equal(together.length, 1);
      assert.ok(apart.length > 1, `${apart.length} batches`);
      const types = (batches: StreamBatch[]) => batches.flat().map((event) => event.type);
      assert.deepEqual(types(together), types(apart));
      assert.deepEqual([together[0][0].type, together[0].at(-1)?.type], ['start', 'finish']);
    } finally {
      await new Promise((resolve) => oneWrite.close(resolve));
    }
  });

  test('a protocol made to decode in full asks its translator for a decoder without templates; the same events come out', async () => {
    const asked: (StreamDecoderOptions | undefined)[] = [];
    const recording: HttpChatTranslator = {
      ...openAIChatTranslator,
      createStreamDecoder: (options) => {
        asked.push(options);
        return openAIChatTranslator.createStreamDecoder(options);
      },
    };
    const events = await Promise.all(
      (['templates', 'full'] as const).map((decoding) => collect(httpChatProtocol(recording, decoding).stream(request, endpoint(), callContext()))),
    );
    assert.deepEqual(asked, [{ templates: true }, { templates: false }]);
    // The simulator numbers its answers: the two differ in their id alone.
    const withoutId = (batch: readonly StreamEvent[]) =>
      comparable(batch.map((event) => (event.type === 'start' ? { ...event, providerResponseId: 'id' } : event)));
    assert.deepEqual(withoutId(events[1]), withoutId(events[0]));
    assert.ok(events[0].filter((event) => event.type === 'text-delta').length >= 3);
    assert.notEqual(protocolsDecoding('full'), protocolsDecoding('templates'));
    assert.equal(protocolsDecoding('full'), protocolsDecoding('full'));
  });

  test('a consumer that stops early releases the connection; the pool keeps working', async () => {
    for await (const batch of openAIChatProtocol.stream(request, endpoint(), callContext())) {
      if (batch.some((event) => event.type === 'text-start')) break;
    }
    const events = await collect(openAIChatProtocol.stream(request, endpoint(), callContext()));
    assert.equal(events.at(-1)?.type, 'finish');
  });

  test("an attempt's trace context goes upstream, streamed or not, and with plain JSON calls", async () => {
    const traceHeaders = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'vendor=opaque' };
    await openAIChatProtocol.complete({ ...request, stream: false }, endpoint(), callContext({ requestId: 'req_traced', traceHeaders }));
    await collect(openAIChatProtocol.stream(request, endpoint(), callContext({ requestId: 'req_traced', traceHeaders })));
    // The JSON calls of the image, video and embeddings protocols go through postJson.
    await postJson(
      `${sim.baseUrl}/chat/completions`,
      { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
      {
        headers: { authorization: 'Bearer sk-test' },
        signal: new AbortController().signal,
        correlation: { requestId: 'req_traced', traceHeaders },
        parseError: (status) => errors.upstreamStatus(status, undefined, false),
      },
    );
    const traced = sim.requests.slice(-3);
    assert.equal(traced.length, 3);
    for (const recorded of traced) {
      assert.equal(recorded.headers.traceparent, traceHeaders.traceparent);
      assert.equal(recorded.headers.tracestate, traceHeaders.tracestate);
      assert.equal(recorded.headers['x-request-id'], 'req_traced');
    }
    await openAIChatProtocol.complete({ ...request, stream: false }, endpoint(), callContext());
    assert.equal(sim.requests.at(-1)!.headers.traceparent, undefined, 'none without tracing');
  });
});

describe('responses upstream over the harness', () => {
  let sim: OpenAIResponsesSimulator;
  before(async () => {
    sim = await startOpenAIResponsesSimulator({ doneSentinel: true, cachedTokens: 4 });
  });
  after(async () => {
    await sim.close();
    await closeUpstreamPools();
  });

  test('a stream with a trailing [DONE] finishes cleanly with cached usage', async () => {
    const events = await collect(
      openAIResponsesProtocol.stream(request, simulatorEndpoint({ kind: 'openai-responses', base_url: sim.baseUrl }), callContext()),
    );
    const usage = events.find((event) => event.type === 'usage');
    assert.equal(usage?.type === 'usage' && usage.usage.cacheReadTokens, 4);
    assert.deepEqual(events.at(-1), { type: 'finish', finish: { reason: 'stop', raw: 'completed' } });
  });

  test('the provider error event mid-stream: an error event', async () => {
    sim.enqueue({ kind: 'stream-error', afterEvents: 5 });
    const events = await collect(
      openAIResponsesProtocol.stream(request, simulatorEndpoint({ kind: 'openai-responses', base_url: sim.baseUrl }), callContext()),
    );
    assert.equal(events.at(-1)?.type, 'error');
  });
});
