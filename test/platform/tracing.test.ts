/**
 * OpenTelemetry tracing of a real server process (docs/operations.md, "Tracing"), exported over
 * OTLP/HTTP to a receiver run by the test: the span tree (the client's trace context → the server
 * span → one span per upstream attempt, whose context reaches the upstream as `traceparent`), every
 * GenAI attribute for chat, messages, responses, images and video, streamed and not, a fallback, a
 * stream its client left, and the job span of a video linked to the request that created it (the
 * spans of its steps that parked it ended as handed back).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { dump } from 'js-yaml';
import { DEMO_CONFIG_PATH, loadConfigFile } from '../../src/config/load.ts';
import { usdToPicos } from '../../src/core/money.ts';
import { call } from '../helpers/http.ts';
import { untilEnded } from '../helpers/jobs.ts';
import { type OtlpReceiver, type ReceivedSpan, SPAN_KIND, startOtlpReceiver } from '../helpers/otlp-receiver.ts';
import { fundedAccount, type Server, startServer } from '../helpers/servers.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import { type OpenAIChatSimulator, startOpenAIChatSimulator } from '../simulators/openai-chat.ts';

const TRACED = 'gateway/traced';
const CACHED_TOKENS = 3;
/** A prompt no span may carry. */
const PROMPT = 'A secret prompt about violet lighthouses that must never reach a trace.';

let workDir: string;
let receiver: OtlpReceiver;
let first: OpenAIChatSimulator;
let second: OpenAIChatSimulator;
let server: Server;
let key: string;

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'gateway-tracing-'));
  receiver = await startOtlpReceiver();
  first = await startOpenAIChatSimulator({ cachedTokens: CACHED_TOKENS });
  second = await startOpenAIChatSimulator({ cachedTokens: CACHED_TOKENS });
  const demo = loadConfigFile(DEMO_CONFIG_PATH);
  const traced = chatModelsConfig({
    [TRACED]: [
      { id: 'first', kind: 'openai', baseUrl: first.baseUrl },
      { id: 'second', kind: 'openai', baseUrl: second.baseUrl },
    ],
  });
  const config = {
    ...demo,
    providers: [...demo.providers.map((provider) => ({ ...provider, simulated: { chunk_delay_ms: 0, video_delay_ms: 200 } })), ...traced.providers],
    models: [...demo.models, ...traced.models],
    jobs: { poll_interval_ms: 50 },
    videos: { poll_interval_ms: 100, max_poll_interval_ms: 200 },
  };
  const configPath = join(workDir, 'tracing.yaml');
  await writeFile(configPath, dump(config));
  server = await startServer(configPath, {
    GATEWAY_DATA_DIR: join(workDir, 'data'),
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'gateway-under-test',
    OTEL_BSP_SCHEDULE_DELAY: '20',
  });
  ({ key } = await fundedAccount(server, 'traced'));
});

after(async () => {
  await server?.process.stop();
  await first?.close();
  await second?.close();
  await receiver?.close();
  await rm(workDir, { recursive: true, force: true });
});

/** A client's own trace context, so that each test finds its spans by trace id. */
function clientContext(): { readonly traceId: string; readonly spanId: string; readonly traceparent: string } {
  const hex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex');
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const openai = (traceparent: string) => new OpenAI({ apiKey: key, baseURL: `${server.baseUrl}/v1`, maxRetries: 0, defaultHeaders: { traceparent } });
const anthropic = (traceparent: string) => new Anthropic({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0, defaultHeaders: { traceparent } });

interface RequestSpans {
  readonly server: ReceivedSpan;
  /** Its upstream attempts, in the order they started. */
  readonly attempts: readonly ReceivedSpan[];
}

/** The server span of the request the client traced, once it and `attempts` attempt spans arrived. */
async function spansOf(traceId: string, attempts = 1): Promise<RequestSpans> {
  const [span] = await receiver.waitForSpans((candidate) => candidate.traceId === traceId && candidate.kind === SPAN_KIND.server, 1);
  const children = await receiver.waitForSpans((candidate) => candidate.parentSpanId === span.spanId && candidate.kind === SPAN_KIND.client, attempts);
  return { server: span, attempts: children };
}

/** The server span is the client's child; each attempt span the server span's. */
function assertTree(context: ReturnType<typeof clientContext>, spans: RequestSpans): void {
  assert.equal(spans.server.parentSpanId, context.spanId, "the server span is a child of the client's span");
  assert.equal(spans.server.resource['service.name'], 'gateway-under-test', 'OTEL_SERVICE_NAME names the service');
  for (const attempt of spans.attempts) {
    assert.equal(attempt.traceId, context.traceId);
    assert.equal(attempt.parentSpanId, spans.server.spanId);
  }
}

/** Nothing a client sent or received as content, and no key, is in any span. */
function assertNoSecrets(spans: RequestSpans): void {
  for (const span of [spans.server, ...spans.attempts]) {
    for (const value of Object.values(span.attributes)) {
      assert.ok(!String(value).includes('violet lighthouses'), `no prompt in ${span.name}`);
      assert.ok(!String(value).includes(key), `no key in ${span.name}`);
    }
  }
}

interface ExpectedCall {
  readonly route: string;
  readonly operation: string;
  readonly requestModel: string;
  readonly provider: string;
  readonly stream: boolean;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly costUsd: string;
}

/** Every GenAI attribute of the server span, and the gateway's own. */
function assertServerSpan(span: ReceivedSpan, expected: ExpectedCall): void {
  const attributes = span.attributes;
  assert.equal(span.name, `POST ${expected.route}`);
  assert.equal(attributes['http.request.method'], 'POST');
  assert.equal(attributes['http.route'], expected.route);
  assert.equal(attributes['http.response.status_code'], 200);
  assert.match(String(attributes['gateway.request_id']), /^req_/);
  assert.equal(attributes['gen_ai.operation.name'], expected.operation);
  assert.equal(attributes['gen_ai.request.model'], expected.requestModel);
  assert.equal(attributes['gen_ai.response.model'], expected.requestModel);
  assert.equal(attributes['gen_ai.provider.name'], expected.provider);
  assert.equal(attributes['gen_ai.usage.input_tokens'], expected.inputTokens, 'input tokens, cached ones included');
  assert.equal(attributes['gen_ai.usage.output_tokens'], expected.outputTokens);
  assert.equal(attributes['gen_ai.usage.cache_read.input_tokens'], expected.cacheReadTokens);
  assert.equal(attributes['gen_ai.usage.cache_creation.input_tokens'], 0);
  assert.equal(attributes['gateway.stream'], expected.stream);
  assert.equal(attributes['gateway.request.status'], 'completed');
  assert.equal(attributes['gateway.cost.usd'], expected.costUsd, 'the cost the client was told');
  assert.equal(attributes['gateway.cost.picos'], Number(usdToPicos(expected.costUsd)), 'the same cost in pico-dollars');
  assert.equal(span.statusCode, 0);
}

/** The attempt span of an upstream that served. */
function assertServedAttempt(span: ReceivedSpan, provider: string, operation: string): void {
  assert.equal(span.attributes['gen_ai.operation.name'], operation);
  assert.equal(span.attributes['gateway.provider.id'], provider);
  assert.equal(span.attributes['gateway.attempt.outcome'], 'succeeded');
  assert.equal(span.statusCode, 0);
}

/** The simulator received the attempt span's context as `traceparent`. */
function assertPropagated(simulator: OpenAIChatSimulator, attempt: ReceivedSpan, before: number): void {
  const received = simulator.requests.slice(before).map((request) => request.headers.traceparent);
  assert.ok(received.includes(`00-${attempt.traceId}-${attempt.spanId}-01`), `traceparent of the attempt upstream (got ${received.join(', ')})`);
}

describe('tracing over OTLP', () => {
  test('chat completion: the span tree, every GenAI attribute, the trace context upstream', async () => {
    const context = clientContext();
    const before = first.requests.length;
    const { data: completion, response } = await openai(context.traceparent)
      .chat.completions.create({ model: TRACED, messages: [{ role: 'user', content: PROMPT }] })
      .withResponse();
    const spans = await spansOf(context.traceId);
    assertTree(context, spans);
    assertServerSpan(spans.server, {
      route: '/v1/chat/completions',
      operation: 'chat',
      requestModel: TRACED,
      provider: 'openai',
      stream: false,
      inputTokens: completion.usage!.prompt_tokens,
      outputTokens: completion.usage!.completion_tokens,
      cacheReadTokens: CACHED_TOKENS,
      costUsd: response.headers.get('x-gateway-cost-usd')!,
    });
    assert.equal(spans.server.attributes['gateway.request_id'], response.headers.get('x-gateway-request-id'));
    assert.equal(spans.server.attributes['gateway.endpoint'], `first:first-model`);
    const [attempt] = spans.attempts;
    assertServedAttempt(attempt, 'first', 'chat');
    assert.equal(attempt.name, 'chat first-model');
    assert.equal(attempt.attributes['gen_ai.provider.name'], 'openai');
    assert.equal(attempt.attributes['gen_ai.request.model'], 'first-model');
    assert.equal(attempt.attributes['server.address'], '127.0.0.1');
    assertPropagated(first, attempt, before);
    assertNoSecrets(spans);
  });

  test('streamed chat completion: the span ends with the stream, with its usage and first byte', async () => {
    const context = clientContext();
    const stream = await openai(context.traceparent).chat.completions.create({
      model: TRACED,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: PROMPT }],
    });
    let usage: OpenAI.CompletionUsage | undefined;
    let cost: string | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) {
        usage = chunk.usage;
        cost = (chunk.usage as unknown as { cost: string }).cost;
      }
    }
    const spans = await spansOf(context.traceId);
    assertTree(context, spans);
    assertServerSpan(spans.server, {
      route: '/v1/chat/completions',
      operation: 'chat',
      requestModel: TRACED,
      provider: 'openai',
      stream: true,
      inputTokens: usage!.prompt_tokens,
      outputTokens: usage!.completion_tokens,
      cacheReadTokens: CACHED_TOKENS,
      costUsd: cost!,
    });
    assert.equal(typeof spans.server.attributes['gateway.first_byte_ms'], 'number');
    assert.equal(typeof spans.attempts[0].attributes['gateway.first_byte_ms'], 'number', 'the attempt has its time to first byte');
    assert.equal(spans.attempts[0].attributes['gen_ai.usage.output_tokens'], usage!.completion_tokens);
    assertNoSecrets(spans);
  });

  test('fallback: the first endpoint answers 503, the second serves; two attempt spans', async () => {
    const context = clientContext();
    first.enqueue({ kind: 'status', status: 503 });
    const before = second.requests.length;
    const { response } = await openai(context.traceparent)
      .chat.completions.create({ model: TRACED, messages: [{ role: 'user', content: PROMPT }] })
      .withResponse();
    assert.equal(response.status, 200);
    const spans = await spansOf(context.traceId, 2);
    assertTree(context, spans);
    const failed = spans.attempts.find((span) => span.attributes['gateway.provider.id'] === 'first')!;
    const served = spans.attempts.find((span) => span.attributes['gateway.provider.id'] === 'second')!;
    assert.equal(failed.attributes['gateway.attempt.outcome'], 'failed');
    assert.equal(failed.attributes['gateway.attempt.status'], 503);
    assert.equal(typeof failed.attributes['error.type'], 'string');
    assert.equal(failed.statusCode, 2, 'the failed attempt is an error');
    assertServedAttempt(served, 'second', 'chat');
    assert.equal(served.attributes['gateway.fallback.reason'], failed.attributes['error.type'], 'why the first did not serve');
    assert.equal(failed.attributes['gateway.fallback.reason'], undefined);
    assert.equal(spans.server.attributes['gateway.endpoint'], 'second:second-model');
    assertPropagated(second, served, before);
  });

  test('a stream its client leaves: the span ends, cancelled', async () => {
    const context = clientContext();
    first.enqueue({ kind: 'stall', afterEvents: 2 });
    const controller = new AbortController();
    const stream = await openai(context.traceparent).chat.completions.create(
      { model: TRACED, stream: true, messages: [{ role: 'user', content: PROMPT }] },
      { signal: controller.signal },
    );
    try {
      for await (const _chunk of stream) controller.abort();
    } catch {
      // The SDK may report the abort, or end the iteration quietly.
    }
    const spans = await spansOf(context.traceId);
    assert.equal(spans.server.attributes['gateway.request.status'], 'cancelled');
    assert.equal(spans.attempts[0].attributes['gateway.attempt.outcome'], 'abandoned');
  });

  test('a stream the upstream breaks off: the span ends, failed, with the error', async () => {
    const context = clientContext();
    first.enqueue({ kind: 'stream-error', afterEvents: 3 });
    const stream = await openai(context.traceparent).chat.completions.create({ model: TRACED, stream: true, messages: [{ role: 'user', content: PROMPT }] });
    await assert.rejects(async () => {
      for await (const _chunk of stream);
    });
    const spans = await spansOf(context.traceId);
    assert.equal(spans.server.attributes['gateway.request.status'], 'failed');
    assert.equal(typeof spans.server.attributes['error.type'], 'string');
    assert.equal(spans.server.statusCode, 2, 'the server span is an error');
    assert.equal(spans.server.attributes['http.response.status_code'], 200, 'the stream had started');
    assert.ok(Number(spans.server.attributes['gateway.cost.usd']) > 0, 'charged for what it delivered');
    assert.equal(spans.attempts[0].attributes['gateway.attempt.outcome'], 'failed');
  });

  for (const stream of [false, true]) {
    test(`messages${stream ? ', streamed' : ''}`, async () => {
      const context = clientContext();
      const client = anthropic(context.traceparent);
      const body = { model: TRACED, max_tokens: 200, messages: [{ role: 'user' as const, content: PROMPT }] };
      let usage: Anthropic.Usage;
      let cost: string;
      if (stream) {
        const final = await client.messages.stream(body).finalMessage();
        usage = final.usage;
        cost = (final.usage as unknown as { cost: string }).cost;
      } else {
        const { data, response } = await client.messages.create(body).withResponse();
        usage = data.usage;
        cost = response.headers.get('x-gateway-cost-usd')!;
      }
      const spans = await spansOf(context.traceId);
      assertTree(context, spans);
      assertServerSpan(spans.server, {
        route: '/v1/messages',
        operation: 'chat',
        requestModel: TRACED,
        provider: 'openai',
        stream,
        inputTokens: usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0),
        outputTokens: usage.output_tokens,
        cacheReadTokens: usage.cache_read_input_tokens ?? 0,
        costUsd: cost ?? spans.server.attributes['gateway.cost.usd'],
      });
      assertServedAttempt(spans.attempts[0], 'first', 'chat');
      assertNoSecrets(spans);
    });

    test(`responses${stream ? ', streamed' : ''}`, async () => {
      const context = clientContext();
      const client = openai(context.traceparent);
      let usage: OpenAI.Responses.ResponseUsage;
      if (stream) {
        const events = await client.responses.create({ model: TRACED, input: PROMPT, stream: true });
        let completed: OpenAI.Responses.Response | undefined;
        for await (const event of events) if (event.type === 'response.completed') completed = event.response;
        usage = completed!.usage!;
      } else {
        usage = (await client.responses.create({ model: TRACED, input: PROMPT })).usage!;
      }
      const spans = await spansOf(context.traceId);
      assertTree(context, spans);
      assertServerSpan(spans.server, {
        route: '/v1/responses',
        operation: 'chat',
        requestModel: TRACED,
        provider: 'openai',
        stream,
        inputTokens: usage.input_tokens,
        outputTokens: usage.output_tokens,
        cacheReadTokens: usage.input_tokens_details.cached_tokens,
        costUsd: spans.server.attributes['gateway.cost.usd'] as string,
      });
      assert.ok(Number(spans.server.attributes['gateway.cost.usd']) > 0);
      assertServedAttempt(spans.attempts[0], 'first', 'chat');
    });
  }

  test('images: generate_content', async () => {
    const context = clientContext();
    const { response } = await openai(context.traceparent)
      .images.generate({ model: 'gateway/prism-image-2', prompt: PROMPT, size: '1024x1024' })
      .withResponse();
    const spans = await spansOf(context.traceId);
    assertTree(context, spans);
    const attributes = spans.server.attributes;
    assert.equal(spans.server.name, 'POST /v1/images/generations');
    assert.equal(attributes['gen_ai.operation.name'], 'generate_content');
    assert.equal(attributes['gen_ai.request.model'], 'gateway/prism-image-2');
    assert.equal(attributes['gen_ai.response.model'], 'gateway/prism-image-2');
    assert.equal(attributes['gen_ai.provider.name'], 'simulated');
    assert.equal(attributes['gateway.cost.usd'], response.headers.get('x-gateway-cost-usd'));
    assert.equal(attributes['gateway.request.status'], 'completed');
    assert.equal(typeof attributes['gen_ai.usage.input_tokens'], 'number');
    assertServedAttempt(spans.attempts[0], 'sim-first', 'generate_content');
    assertNoSecrets(spans);
  });

  test('embeddings', async () => {
    const context = clientContext();
    const { data, response } = await openai(context.traceparent).embeddings.create({ model: 'gateway/atlas-embed-1', input: PROMPT }).withResponse();
    const spans = await spansOf(context.traceId);
    assertTree(context, spans);
    const attributes = spans.server.attributes;
    assert.equal(attributes['gen_ai.operation.name'], 'embeddings');
    assert.equal(attributes['gen_ai.request.model'], 'gateway/atlas-embed-1');
    assert.equal(attributes['gen_ai.usage.input_tokens'], data.usage.prompt_tokens);
    assert.equal(attributes['gateway.cost.usd'], response.headers.get('x-gateway-cost-usd'));
    assertServedAttempt(spans.attempts[0], 'sim-first', 'embeddings');
    assertNoSecrets(spans);
  });

  test("background response: the job's span, linked to the creating request's, with its attempt", async () => {
    const context = clientContext();
    const created = await openai(context.traceparent).responses.create({ model: TRACED, input: PROMPT, background: true });
    assert.equal(created.status, 'queued');
    const [request] = await receiver.waitForSpans((span) => span.traceId === context.traceId && span.kind === SPAN_KIND.server, 1);
    assert.equal(request.attributes['gen_ai.operation.name'], 'chat');
    const [job] = await receiver.waitForSpans(
      (span) => span.kind === SPAN_KIND.consumer && span.links.some((link) => link.spanId === request.spanId && link.traceId === context.traceId),
      1,
    );
    assert.equal(job.name, 'job responses');
    assert.equal(job.attributes['gateway.request_id'], request.attributes['gateway.request_id']);
    assert.equal(job.attributes['gen_ai.response.model'], TRACED);
    assert.equal(job.attributes['gen_ai.provider.name'], 'openai');
    assert.equal(job.attributes['gateway.request.status'], 'completed');
    assert.ok((job.attributes['gen_ai.usage.output_tokens'] as number) > 0);
    const [attempt] = await receiver.waitForSpans((span) => span.parentSpanId === job.spanId && span.kind === SPAN_KIND.client, 1);
    assertServedAttempt(attempt, 'first', 'chat');
    assert.equal(attempt.traceId, job.traceId);
  });

  /** A video submitted under a client's trace context: the job's id and the creating request's span. */
  const submitTracedVideo = async () => {
    const context = clientContext();
    const submitted = await call(server.baseUrl, 'POST', '/v1/videos/generations', {
      key,
      headers: { traceparent: context.traceparent },
      json: { model: 'gateway/reel-3-lite', prompt: PROMPT, duration: 5 },
    });
    assert.equal(submitted.status, 200, submitted.text);
    const [request] = await receiver.waitForSpans((span) => span.traceId === context.traceId && span.kind === SPAN_KIND.server, 1);
    return { id: submitted.body.id as string, context, request };
  };

  test("video: the creating request's span, and the job's span linked to it with its attempts", async () => {
    const { id, context, request } = await submitTracedVideo();
    assert.equal(request.parentSpanId, context.spanId);
    assert.equal(request.attributes['gen_ai.operation.name'], 'generate_content');
    assert.equal(request.attributes['gen_ai.request.model'], 'gateway/reel-3-lite');
    assert.equal(request.attributes['http.response.status_code'], 200);

    const video = await untilEnded(
      async () => (await call(server.baseUrl, 'GET', `/v1/videos/generations/${id}`, { key })).body as { status: string },
      ['queued', 'processing'],
      'the video job',
      { intervalMs: 100 },
    );
    assert.equal(video.status, 'completed');
    // The span of the step that ended the job (the steps before it parked it: the next test).
    const [job] = await receiver.waitForSpans((span) => linkedJobSpan(span, request) && span.attributes['gateway.job.handed_back'] === undefined, 1);
    assert.equal(job.name, 'job videos.generations');
    assert.equal(job.attributes['gateway.request_id'], request.attributes['gateway.request_id']);
    assert.equal(job.attributes['gen_ai.operation.name'], 'generate_content');
    assert.equal(job.attributes['gen_ai.request.model'], 'gateway/reel-3-lite');
    assert.equal(job.attributes['gen_ai.response.model'], 'gateway/reel-3-lite');
    assert.equal(job.attributes['gen_ai.provider.name'], 'simulated');
    assert.equal(job.attributes['gateway.request.status'], 'completed');
    assert.ok(Number(job.attributes['gateway.cost.usd']) > 0, 'the job span carries what the video cost');
    const attempts = await receiver.waitForSpans((span) => span.parentSpanId === job.spanId && span.kind === SPAN_KIND.client, 1);
    assert.ok(attempts.every((attempt) => attempt.attributes['gateway.endpoint'] !== undefined));
  });

  test("a video's parked steps: each step's span ends, handed back, with no row of its own", async () => {
    const { request } = await submitTracedVideo();
    // The simulated video takes longer than the first look: that step parks the job.
    const [parked] = await receiver.waitForSpans((span) => linkedJobSpan(span, request) && span.attributes['gateway.job.handed_back'] === true, 1);
    assert.equal(parked.name, 'job videos.generations');
    assert.equal(parked.attributes['gateway.job.handed_back.reason'], 'parked');
    assert.equal(parked.attributes['gateway.request_id'], request.attributes['gateway.request_id']);
    assert.equal(parked.attributes['gateway.request.status'], undefined);
    // The step that ends the job records the row on its own span.
    const [ended] = await receiver.waitForSpans((span) => linkedJobSpan(span, request) && span.attributes['gateway.request.status'] !== undefined, 1);
    assert.equal(ended.attributes['gateway.request.status'], 'completed');
    assert.equal(ended.attributes['gateway.job.handed_back'], undefined);
  });
});

/** A job's span linked to the span of the request that created the job. */
function linkedJobSpan(span: ReceivedSpan, request: ReceivedSpan): boolean {
  return span.kind === SPAN_KIND.consumer && span.links.some((link) => link.spanId === request.spanId && link.traceId === request.traceId);
}
