/**
 * Money caps over real HTTP (docs/billing.md, "Money caps"): upstreams that ignore `max_tokens` and
 * report more output than they were allowed, in every text protocol, streamed and not. The charge is
 * the request's hold at most, to the pico-USD, so that no key is ever charged past its spend limit;
 * what the upstream reported beyond the hold is recorded in the request log, the metrics and the
 * admin usage report, and not billed.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { RouteEndpoint } from '../../src/catalog/types.ts';
import type { ProviderConfig } from '../../src/config/schema.ts';
import { formatUsd, usdToPicos } from '../../src/core/money.ts';
import { registerChatRoutes } from '../../src/dialects/chat/route.ts';
import { registerImageRoutes } from '../../src/dialects/images/route.ts';
import type { AppDeps } from '../../src/http/deps.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import { implement, provides } from '../../src/protocols/capability.ts';
import { IMAGES, type ImagesProtocol } from '../../src/protocols/image-protocol.ts';
import { CHAT, type CallContext, type ChatProtocol } from '../../src/protocols/protocol.ts';
import { simulatedImagesProtocol } from '../../src/protocols/simulated/images.ts';
import { simulatedProtocol } from '../../src/protocols/simulated/protocol.ts';
import type { RequestLogRecord } from '../../src/storage/store.ts';
import { endpoint, eventually, flushRequestLog, ledger, model, ownerOf, picosPerToken, simulatedConfig } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { imageEndpoint, imageModel } from '../images/helpers.ts';
import { call } from '../helpers/http.ts';
import { metricValue } from '../helpers/metrics.ts';
import { startAnthropicSimulator } from '../simulators/anthropic.ts';
import { requestIdOf } from '../simulators/chat-e2e.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import { startGeminiSimulator } from '../simulators/gemini.ts';
import type { Simulator } from '../simulators/harness.ts';
import { startOpenAIChatSimulator } from '../simulators/openai-chat.ts';
import { startOpenAIResponsesSimulator } from '../simulators/openai-responses.ts';
import type { OverDelivery } from '../simulators/reply.ts';

const ADMIN_KEY = 'admin-secret-for-money-caps';
/** Reported on top of what is written: 10 million output tokens at 2 $/M, 20 USD per request. */
const OVER_DELIVERY: OverDelivery = { ignoreMaxTokens: true, extraOutputTokens: 10_000_000 };
const PROMPT = 'one two three four five six seven eight nine ten eleven twelve';

type OverDeliveringSimulator = Simulator & { readonly baseUrl: string; readonly options: { overDelivery?: OverDelivery } };

const UPSTREAMS: readonly { readonly kind: ProviderConfig['kind']; readonly start: () => Promise<OverDeliveringSimulator> }[] = [
  { kind: 'openai', start: () => startOpenAIChatSimulator({ overDelivery: OVER_DELIVERY }) },
  { kind: 'openai-responses', start: () => startOpenAIResponsesSimulator({ overDelivery: OVER_DELIVERY }) },
  { kind: 'anthropic', start: () => startAnthropicSimulator({ overDelivery: OVER_DELIVERY }) },
  { kind: 'gemini', start: () => startGeminiSimulator({ overDelivery: OVER_DELIVERY }) },
];

const modelOf = (kind: string) => `gateway/over-${kind}`;

/** The reference price of a logged row's usage at the first route's rates (test/simulators/gateway-config.ts). */
function priced(row: RequestLogRecord): bigint {
  const oneHour = BigInt(row.cacheWrite1hTokens ?? 0);
  return (
    BigInt(row.inputTokens) * picosPerToken('1') +
    BigInt(row.cacheReadTokens) * picosPerToken('0.1') +
    (BigInt(row.cacheWriteTokens) - oneHour) * picosPerToken('1.25') +
    oneHour * picosPerToken('2') +
    BigInt(row.outputTokens) * picosPerToken('2')
  );
}

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`money caps: upstreams that deliver and report more than allowed (${engine})`, () => {
    let gateway: TestGateway;
    const simulators: OverDeliveringSimulator[] = [];

    before(async () => {
      for (const upstream of UPSTREAMS) simulators.push(await upstream.start());
      const config = chatModelsConfig(
        Object.fromEntries(
          UPSTREAMS.map((upstream, index) => [
            modelOf(upstream.kind),
            [{ id: `up-${upstream.kind}`, kind: upstream.kind, baseUrl: simulators[index].baseUrl }],
          ]),
        ),
      );
      gateway = await startGateway({ config, engine, adminKey: ADMIN_KEY });
    });
    after(async () => {
      await gateway?.close();
      for (const simulator of simulators) await simulator.close();
    });

    /** The charge of a request in the ledger and the hold it settled. */
    async function chargeAndHold(requestId: string): Promise<{ charged: bigint; held: bigint }> {
      const charges = (await gateway.store.listEntries(ownerOf(gateway))).filter((entry) => entry.kind === 'charge' && entry.requestId === requestId);
      assert.equal(charges.length, 1, `one charge for ${requestId}`);
      const reservation = await gateway.store.getReservation(charges[0].reservationId!);
      return { charged: charges[0].amount, held: reservation!.amount };
    }

    async function assertCappedAtHold(requestId: string): Promise<RequestLogRecord> {
      await flushRequestLog(gateway);
      const row = (await gateway.store.getRequest(requestId))!;
      const { charged, held } = await chargeAndHold(requestId);
      assert.equal(charged, held, 'charged the hold, to the pico-USD');
      assert.equal(row.cost, charged);
      assert.ok(row.outputTokens >= 10_000_000, `the upstream's count is logged (${row.outputTokens})`);
      assert.equal(row.overHold, priced(row) - held, 'what the upstream reported beyond the hold is recorded');
      return row;
    }

    for (const [index, upstream] of UPSTREAMS.entries()) {
      test(`${upstream.kind}: a plain answer is charged its hold, not the 20 USD reported; the excess is recorded`, async () => {
        const client = new OpenAI({ apiKey: gateway.apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
        const { data, response } = await client.chat.completions
          .create({ model: modelOf(upstream.kind), max_tokens: 4, messages: [{ role: 'user', content: PROMPT }] })
          .withResponse();
        assert.ok((data.usage?.completion_tokens ?? 0) >= 10_000_000);
        const row = await assertCappedAtHold(requestIdOf(response));
        assert.equal(response.headers.get('x-gateway-cost-usd'), formatUsd(row.cost));
        assert.ok(simulators[index].requests.length >= 1);
      });

      test(`${upstream.kind}: a stream is charged its hold at most; the excess is recorded`, async () => {
        const client = new OpenAI({ apiKey: gateway.apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
        const { data, response } = await client.chat.completions
          .create({
            model: modelOf(upstream.kind),
            max_tokens: 4,
            stream: true,
            stream_options: { include_usage: true },
            messages: [{ role: 'user', content: PROMPT }],
          })
          .withResponse();
        let text = '';
        for await (const chunk of data) text += chunk.choices[0]?.delta.content ?? '';
        assert.ok(text.includes('twelve'), 'the upstream ignored max_tokens');
        await assertCappedAtHold(requestIdOf(response));
      });
    }

    test('a key with spend_limit_usd 0.05 is never charged more, however much its upstream reports', async () => {
      const key = await gateway.createKey({ limits: { spend_limit_usd: '0.05' } });
      const client = new OpenAI({ apiKey: key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
      const requestIds: string[] = [];
      // Each hold is about 0.008 USD (4,000 output tokens at 2 $/M): the limit refuses the seventh.
      for (let attempt = 0; attempt < 10; attempt++) {
        const answer = await call(gateway.baseUrl, 'POST', '/v1/chat/completions', {
          key,
          json: { model: modelOf('openai'), max_tokens: 4_000, messages: [{ role: 'user', content: PROMPT }] },
        });
        if (answer.status === 429) break;
        assert.equal(answer.status, 200, answer.text);
        requestIds.push(answer.headers.get('x-gateway-request-id')!);
      }
      assert.ok(requestIds.length >= 2 && requestIds.length < 10, `${requestIds.length} answered before the limit`);
      let total = 0n;
      for (const requestId of requestIds) {
        const { charged, held } = await chargeAndHold(requestId);
        assert.equal(charged, held);
        total += charged;
      }
      assert.ok(total <= usdToPicos('0.05'), `charged ${formatUsd(total)} of 0.05`);
      await assert.rejects(client.chat.completions.create({ model: modelOf('openai'), max_tokens: 4_000, messages: [{ role: 'user', content: PROMPT }] }), {
        status: 429,
      });
    });

    test('the operator sees which routes over-deliver: the admin usage report and the metrics', async () => {
      await flushRequestLog(gateway);
      const usage = await call(gateway.baseUrl, 'GET', `/admin/v1/usage?account_id=${gateway.account.id}`, { key: ADMIN_KEY });
      assert.equal(usage.status, 200, usage.text);
      const rows = (await Promise.all(
        (
          await gateway.store.listEntries(ownerOf(gateway))
        )
          .filter((entry) => entry.kind === 'charge')
          .map((entry) => gateway.store.getRequest(entry.requestId!)),
      )) as RequestLogRecord[];
      for (const upstream of UPSTREAMS) {
        const line = usage.body.data.find((row: { model: string }) => row.model === modelOf(upstream.kind));
        const logged = rows.filter((row) => row.model === modelOf(upstream.kind));
        assert.equal(line.over_hold_requests, logged.length);
        assert.equal(line.over_hold_usd, formatUsd(logged.reduce((sum, row) => sum + row.overHold, 0n)));
      }
      const metrics = await call(gateway.baseUrl, 'GET', '/metrics');
      for (const upstream of UPSTREAMS) {
        const labels = { provider: `up-${upstream.kind}`, upstream_model: `up-${upstream.kind}-model` };
        const count = rows.filter((row) => row.model === modelOf(upstream.kind)).length;
        assert.equal(metricValue(metrics.text, 'gateway_over_hold_requests_total', labels), count);
        assert.ok(metricValue(metrics.text, 'gateway_over_hold_usd_total', labels) > 19 * count);
      }
    });

    test("an organization's spend_limit_usd 0.05 holds over its keys together, however much their upstream reports", async () => {
      const admin = (method: string, path: string, json?: unknown) => call(gateway.baseUrl, method, `/admin/v1${path}`, { key: ADMIN_KEY, json });
      const organization = (await admin('POST', '/organizations', { name: 'Capped org', limits: { spend_limit_usd: '0.05' } })).body.id as string;
      await admin('POST', `/organizations/${organization}/credit`, { amount_usd: '5' });
      const keys = await Promise.all([0, 1].map(async () => (await admin('POST', '/keys', { organization_id: organization })).body.key as string));
      // Each hold is about 0.008 USD: at most six fit under the limit, whichever key makes them.
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, index) =>
          call(gateway.baseUrl, 'POST', '/v1/chat/completions', {
            key: keys[index % 2],
            json: { model: modelOf('anthropic'), max_tokens: 4_000, messages: [{ role: 'user', content: PROMPT }] },
          }),
        ),
      );
      assert.ok(answers.some((answer) => answer.status === 200));
      for (const answer of answers.filter((answer) => answer.status !== 200)) assert.equal(answer.status, 429, answer.text);
      const charges = (await gateway.store.listEntries({ kind: 'organization', id: organization })).filter((entry) => entry.kind === 'charge');
      assert.equal(charges.length, answers.filter((answer) => answer.status === 200).length);
      for (const charge of charges) assert.equal(charge.amount, (await gateway.store.getReservation(charge.reservationId!))!.amount, 'each charged its hold');
      const total = charges.reduce((sum, charge) => sum + charge.amount, 0n);
      assert.ok(total <= usdToPicos('0.05'), `charged ${formatUsd(total)} of 0.05`);
    });
  });
}

/** The text of a chat stream that must end with the credit hold's in-stream error. */
async function textUntilHoldError(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): Promise<string> {
  let text = '';
  await assert.rejects(
    (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })(),
    (error: unknown) => error instanceof OpenAI.APIError && /credit hold/.test(error.message),
  );
  return text;
}

/** An upstream whose answer was already on its way: it arrives after the client left, whatever the abort. */
function lateAnswer<Request, Result>(answer: (request: Request, route: RouteEndpoint, context: CallContext) => Promise<Result>, called: () => void) {
  return async (request: Request, route: RouteEndpoint, context: CallContext): Promise<Result> => {
    called();
    if (!context.signal.aborted) await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
    return answer(request, route, { ...context, signal: new AbortController().signal });
  };
}

const LATE_CASES = [
  {
    what: 'a chat completion',
    path: '/v1/chat/completions',
    body: { model: 'gateway/late', messages: [{ role: 'user', content: 'hello' }] },
    config: simulatedConfig([model('gateway/late', [endpoint('late')])]),
    routes: (called: () => void) => (app: FastifyInstance, deps: AppDeps) => {
      const protocol: ChatProtocol = { ...simulatedProtocol, complete: lateAnswer(simulatedProtocol.complete.bind(simulatedProtocol), called) };
      return registerChatRoutes(app, deps, new Pipeline(deps, { protocols: { simulated: provides(implement(CHAT, protocol)) } }));
    },
  },
  {
    // An image's files are stored before its charge: the client gone, neither happens.
    what: 'an image generation',
    path: '/v1/images/generations',
    body: { model: 'gateway/late', prompt: 'a late picture', size: '16x16' },
    config: simulatedConfig([imageModel('gateway/late', [imageEndpoint('late', { limits: { supported_sizes: ['16x16'] } })])]),
    routes: (called: () => void) => (app: FastifyInstance, deps: AppDeps) => {
      const protocol: ImagesProtocol = { ...simulatedImagesProtocol, complete: lateAnswer(simulatedImagesProtocol.complete, called) };
      return registerImageRoutes(app, deps, new Pipeline(deps, { protocols: { simulated: provides(implement(IMAGES, protocol)) } }));
    },
  },
];

for (const late of LATE_CASES) {
  describe(`a client gone before its plain answer was written: ${late.what}`, () => {
    let gateway: TestGateway;
    let called: () => void;
    const upstreamCalled = new Promise<void>((resolve) => (called = resolve));

    before(async () => {
      gateway = await startGateway({ config: late.config, routes: [late.routes(() => called())] });
    });
    after(() => gateway?.close());

    test('is not charged: the hold is released and the request is logged as refused (499)', async () => {
      const body = JSON.stringify(late.body);
      const { hostname, port } = new URL(gateway.baseUrl);
      const socket = connect(Number(port), hostname);
      socket.on('error', () => {});
      socket.write(
        `POST ${late.path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${gateway.apiKey}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await upstreamCalled;
      socket.destroy();
      // The row of a request answered with an error status (499) counts as refused, with no cost.
      const line = await eventually(async () => {
        await flushRequestLog(gateway);
        const found = (await gateway.store.usageSummary(ownerOf(gateway), 0)).find((row) => row.model === 'gateway/late');
        assert.ok(found, 'the request is logged');
        return found;
      });
      assert.deepEqual([line.requests, line.refusedRequests, line.cost], [0, 1, 0n]);
      const state = await ledger(gateway);
      assert.equal(state.balance.reserved, 0n, 'nothing held');
      assert.deepEqual(
        state.entries.filter((entry) => entry.kind === 'charge'),
        [],
        'nothing was charged',
      );
    });
  });
}

describe('a stream that outruns its hold', () => {
  let gateway: TestGateway;
  let openaiUpstream: OverDeliveringSimulator;
  let anthropicUpstream: OverDeliveringSimulator;
  /** A reply of 400 words, far beyond the 4 output tokens asked for. */
  const prompt = Array.from({ length: 400 }, (_, index) => `w${index}`).join(' ');

  before(async () => {
    openaiUpstream = await startOpenAIChatSimulator({ overDelivery: { ignoreMaxTokens: true } });
    anthropicUpstream = await startAnthropicSimulator({ overDelivery: { ignoreMaxTokens: true } });
    const config = chatModelsConfig({
      'gateway/outrun-openai': [{ id: 'outrun-openai', kind: 'openai', baseUrl: openaiUpstream.baseUrl }],
      'gateway/outrun-anthropic': [{ id: 'outrun-anthropic', kind: 'anthropic', baseUrl: anthropicUpstream.baseUrl }],
    });
    // Output dear and no cache rates: the hold's slack over the prompt is small beside the output.
    for (const entry of config.models) entry.endpoints[0].pricing = { unit: 'per_1m_tokens', input_per_1m: 1, output_per_1m: 20 };
    gateway = await startGateway({ config });
  });
  after(async () => {
    await gateway?.close();
    await openaiUpstream?.close();
    await anthropicUpstream?.close();
  });

  async function assertStoppedAtHold(requestId: string, upstream: OverDeliveringSimulator, delivered: string): Promise<void> {
    const words = delivered.split(' ').filter((word) => word.startsWith('w'));
    assert.ok(words.length > 0 && words.length < 200, `${words.length} of 400 words delivered`);
    const row = await eventually(async () => {
      await flushRequestLog(gateway);
      const logged = await gateway.store.getRequest(requestId);
      assert.ok(logged);
      return logged;
    });
    assert.deepEqual([row.status, row.httpStatus, row.errorCode], ['failed', 200, 'upstream_error']);
    const charges = (await gateway.store.listEntries(ownerOf(gateway))).filter((entry) => entry.requestId === requestId);
    assert.equal(charges.length, 1);
    const held = (await gateway.store.getReservation(charges[0].reservationId!))!.amount;
    assert.equal(charges[0].amount, held, 'charged the hold: what was delivered costs more');
    assert.equal(row.cost, held);
    await eventually(async () => assert.equal(upstream.abandoned.length, 1, 'the upstream is read no further'));
  }

  test('chat dialect, OpenAI upstream: stopped with an in-stream error, charged the hold, the upstream read no further', async () => {
    const client = new OpenAI({ apiKey: gateway.apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create({ model: 'gateway/outrun-openai', max_tokens: 4, stream: true, messages: [{ role: 'user', content: prompt }] })
      .withResponse();
    const text = await textUntilHoldError(data);
    await assertStoppedAtHold(requestIdOf(response), openaiUpstream, text);
  });

  test('messages dialect, Anthropic upstream: stopped with an in-stream error event, charged the hold', async () => {
    const client = new Anthropic({ apiKey: gateway.apiKey, baseURL: gateway.baseUrl, maxRetries: 0 });
    const { data, response } = await client.messages
      .create({ model: 'gateway/outrun-anthropic', max_tokens: 4, stream: true, messages: [{ role: 'user', content: prompt }] })
      .withResponse();
    let text = '';
    await assert.rejects(
      (async () => {
        for await (const event of data) if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      })(),
      (error: unknown) => error instanceof Anthropic.APIError && /credit hold/.test(error.message),
    );
    await assertStoppedAtHold(requestIdOf(response), anthropicUpstream, text);
  });
});

describe('a stream that outlives its hold', () => {
  let gateway: TestGateway;
  before(async () => {
    // Holds live 2 seconds; the simulated provider sends a piece of its reply every 250 ms, so its reply outlives the hold.
    const config = simulatedConfig([model('gateway/slow', [endpoint('sim-slow')])], {
      providers: [{ id: 'sim', kind: 'simulated', simulated: { chunk_delay_ms: 250 } }],
      billing: { reservation_ttl_seconds: 2 },
    });
    gateway = await startGateway({ config });
  });
  after(() => gateway?.close());

  test('is stopped before its hold expires, with an in-stream error, and charged for what it delivered', async () => {
    // The simulated reply quotes the prompt, a piece at a time: 40 words take 10 seconds.
    const prompt = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');
    const client = new OpenAI({ apiKey: gateway.apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create({ model: 'gateway/slow', stream: true, messages: [{ role: 'user', content: prompt }] })
      .withResponse();
    const text = await textUntilHoldError(data);
    assert.ok(text.length > 0 && !text.includes('word39'), `a part of the reply was delivered: ${text}`);
    const requestId = requestIdOf(response);
    const row = await eventually(async () => {
      await flushRequestLog(gateway);
      const logged = await gateway.store.getRequest(requestId);
      assert.ok(logged);
      return logged;
    });
    assert.deepEqual([row.status, row.errorCode], ['failed', 'upstream_timeout']);
    const charges = (await gateway.store.listEntries(ownerOf(gateway))).filter((entry) => entry.kind === 'charge' && entry.requestId === requestId);
    assert.equal(charges.length, 1, 'charged once, while the hold was open');
    assert.ok(charges[0].amount > 0n);
    assert.equal(row.cost, charges[0].amount);
    assert.equal((await gateway.store.getReservation(charges[0].reservationId!))?.status, 'settled');
  });
});
