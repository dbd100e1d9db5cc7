/**
 * The end-to-end scenarios every chat upstream protocol must pass: the official `openai` client,
 * unchanged, against the real gateway (test/helpers/gateway.ts) whose providers are simulators of
 * the protocol under test. Each protocol's e2e.test.ts calls `chatEndToEndSuite` and adds the
 * scenarios that are its own.
 *
 * Two models are configured: FALLBACK_MODEL on two providers (primary first), SINGLE_MODEL on the
 * primary only (no fallback possible). Every scenario that reaches an upstream checks the ledger
 * exactly: how many charges, at which route's prices, the balance moved by them alone, and no
 * credit left reserved.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { ProviderConfig } from '../../src/config/schema.ts';
import { formatUsd } from '../../src/core/money.ts';
import type { RequestLogRecord } from '../../src/storage/store.ts';
import { eventually, flushRequestLog, picosPerToken } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { chatModelsConfig } from './gateway-config.ts';
import type { Behaviour, RecordedRequest, Simulator } from './harness.ts';

export const FALLBACK_MODEL = 'gateway/e2e-fallback';
export const SINGLE_MODEL = 'gateway/e2e-single';

/** What the suite needs from a simulator: the harness plus the provider base_url. */
export type ProtocolSimulator = Simulator & { readonly baseUrl: string };

export interface ChatEndToEndOptions<S extends ProtocolSimulator> {
  readonly kind: ProviderConfig['kind'];
  /** Starts a simulator that requires `Authorization`-style credentials equal to `apiKey`. */
  readonly startSimulator: (apiKey: string) => Promise<S>;
  /**
   * The upstream model name and credential a recorded request carries, for protocols whose wire
   * puts them elsewhere than the OpenAI formats (body `model`, `Authorization: Bearer`), the default.
   */
  readonly identify?: (request: RecordedRequest) => UpstreamIdentity;
  /** What the simulator can do beyond the harness's faults; a scenario that needs more is skipped. */
  readonly capabilities?: SimulatorCapabilities<S>;
}

export interface SimulatorCapabilities<S extends ProtocolSimulator> {
  /** Makes the simulator report this many prompt tokens as read from the provider's cache (undefined: none). */
  readonly cachedTokens?: (simulator: S, tokens: number | undefined) => void;
}

export interface UpstreamIdentity {
  readonly model: unknown;
  readonly credential: unknown;
}

function openAIIdentity(request: RecordedRequest): UpstreamIdentity {
  return { model: request.body?.model, credential: request.headers.authorization?.replace(/^Bearer /, '') };
}

export interface ChatEndToEndContext<S extends ProtocolSimulator = ProtocolSimulator> {
  readonly gateway: TestGateway;
  readonly client: OpenAI;
  readonly primary: S;
  readonly secondary: S;
}

/** The primary provider's `timeout_ms`: it bounds each wait for headers and each silence inside a body. */
export const PRIMARY_TIMEOUT_MS = 1_000;

/** Route positions in FALLBACK_MODEL (SINGLE_MODEL has the primary alone), which set their prices. */
export const PRIMARY = 0;
export const SECONDARY = 1;

/** A prompt whose reply streams long enough for a fault after six wire events to cut it short. */
export const LONG_PROMPT = 'one two three four five six seven eight nine ten';

/**
 * Faults after six wire events: by then text is flowing in every protocol's format (the gateway
 * may hold back events that carry no content, so an earlier fault could still be reported as an
 * HTTP error). With the gateway's error code the client sees, where the fault alone decides it.
 */
const MID_STREAM_FAULTS: readonly { readonly name: string; readonly behaviour: Behaviour; readonly code?: string }[] = [
  { name: "the provider's in-stream error event", behaviour: { kind: 'stream-error', afterEvents: 6 } },
  { name: 'a connection reset', behaviour: { kind: 'reset', afterEvents: 6 }, code: 'upstream_unavailable' },
  { name: 'a malformed chunk', behaviour: { kind: 'malformed', afterEvents: 6 }, code: 'upstream_error' },
  { name: 'a body truncated before its terminator', behaviour: { kind: 'truncate', afterEvents: 6 }, code: 'upstream_error' },
  { name: 'an upstream that goes silent past the provider timeout', behaviour: { kind: 'stall', afterEvents: 6 }, code: 'upstream_timeout' },
];

/** Runs the shared scenarios; returns a getter for protocol-specific tests in the same file. */
export function chatEndToEndSuite<S extends ProtocolSimulator>(options: ChatEndToEndOptions<S>): () => ChatEndToEndContext<S> {
  const identify = options.identify ?? openAIIdentity;
  const setCachedTokens = options.capabilities?.cachedTokens;
  let context: ChatEndToEndContext<S> | undefined;
  const get = () => {
    assert.ok(context, 'the end-to-end gateway is not started');
    return context;
  };

  before(async () => {
    const primary = await options.startSimulator('sk-primary');
    const secondary = await options.startSimulator('sk-secondary');
    const provider = (id: string, sim: ProtocolSimulator, env: string) => ({ id, kind: options.kind, baseUrl: sim.baseUrl, apiKeyEnv: env });
    // A short timeout on the primary lets a delayed answer exercise timeout fallback, and a silent
    // body the mid-stream timeout; simulators answer in milliseconds otherwise.
    const first = { ...provider('primary', primary, 'PRIMARY_KEY'), timeoutMs: PRIMARY_TIMEOUT_MS };
    const second = provider('secondary', secondary, 'SECONDARY_KEY');
    const gateway = await startGateway({
      config: chatModelsConfig({ [FALLBACK_MODEL]: [first, second], [SINGLE_MODEL]: [first] }),
      env: { PRIMARY_KEY: 'sk-primary', SECONDARY_KEY: 'sk-secondary' },
      creditUsd: '10',
    });
    const client = new OpenAI({ apiKey: gateway.apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
    context = { gateway, client, primary, secondary };
  });
  beforeEach(() => {
    const { primary, secondary } = get();
    for (const sim of [primary, secondary]) {
      sim.setDefault({ kind: 'normal' });
      setCachedTokens?.(sim, undefined);
    }
  });
  after(async () => {
    await context?.gateway.close();
    await context?.primary.close();
    await context?.secondary.close();
  });

  describe(`chat completions over ${options.kind}`, () => {
    test('plain: content, usage, the upstream model and key, one charge equal to the cost header', async () => {
      const { client, primary, gateway } = get();
      const before = await ledger(gateway);
      const { data, response } = await client.chat.completions
        .create({
          model: SINGLE_MODEL,
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'hello there' },
          ],
        })
        .withResponse();
      assert.equal(data.choices[0].message.content, 'Echo: hello there');
      assert.equal(data.choices[0].finish_reason, 'stop');
      assert.ok(data.usage && data.usage.prompt_tokens > 0 && data.usage.completion_tokens === 3);
      assert.deepEqual(identify(primary.requests.at(-1)!), { model: 'primary-model', credential: 'sk-primary' });
      const charged = await assertCharges(gateway, before, 1, requestIdOf(response));
      assert.equal(response.headers.get('x-gateway-cost-usd'), formatUsd(charged));
      assert.equal(charged, costAt(PRIMARY, data.usage));
    });

    test('streamed: text deltas, a finish, usage whose cost is the ledger charge', async () => {
      const { client, gateway } = get();
      const before = await ledger(gateway);
      const { data: stream, response } = await client.chat.completions
        .create({ model: SINGLE_MODEL, messages: [{ role: 'user', content: 'one two three' }], stream: true, stream_options: { include_usage: true } })
        .withResponse();
      const read = await readChatStream(stream);
      assert.equal(read.error, undefined);
      assert.equal(read.text, 'Echo: one two three');
      assert.equal(read.finish, 'stop');
      assert.equal(read.usage?.completion_tokens, 4);
      const charged = await assertCharges(gateway, before, 1, requestIdOf(response));
      assert.equal(read.usage?.cost, formatUsd(charged));
      assert.equal(charged, costAt(PRIMARY, read.usage!));
    });

    test('tool loop: a call, then the result closes the loop', async () => {
      const { client } = get();
      const tools: OpenAI.ChatCompletionTool[] = [
        {
          type: 'function',
          function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
        },
      ];
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
      const first = await client.chat.completions.create({ model: SINGLE_MODEL, messages, tools });
      const call = first.choices[0].message.tool_calls?.[0];
      assert.equal(first.choices[0].finish_reason, 'tool_calls');
      assert.ok(call && call.type === 'function');
      assert.equal(call.function.name, 'get_weather');
      assert.deepEqual(JSON.parse(call.function.arguments), { city: 'sample' });
      messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '18C and sunny' });
      const second = await client.chat.completions.create({ model: SINGLE_MODEL, messages, tools });
      assert.equal(second.choices[0].message.content, 'Tool results: 18C and sunny');
    });

    test('streamed tool call: the SDK helper assembles it', async () => {
      const { client } = get();
      const stream = client.chat.completions.stream({
        model: SINGLE_MODEL,
        messages: [{ role: 'user', content: 'Look it up' }],
        tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
      });
      const completion = await stream.finalChatCompletion();
      const call = completion.choices[0].message.tool_calls?.[0];
      assert.ok(call && call.type === 'function');
      assert.deepEqual([call.function.name, call.function.arguments], ['lookup', '{"q":"sample"}']);
    });

    test('json_schema response format', async () => {
      const { client } = get();
      const completion = await client.chat.completions.create({
        model: SINGLE_MODEL,
        messages: [{ role: 'user', content: 'Give me a city' }],
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'city',
            strict: true,
            schema: {
              type: 'object',
              properties: { name: { type: 'string' }, population: { type: 'integer' } },
              required: ['name', 'population'],
              additionalProperties: false,
            },
          },
        },
      });
      assert.deepEqual(JSON.parse(completion.choices[0].message.content ?? ''), { name: 'sample', population: 1 });
    });

    test("cached prompt tokens: part of the prompt, billed at the route's cache-read rate, cost header = ledger charge", {
      skip: setCachedTokens === undefined && 'the simulator cannot report cached tokens',
    }, async () => {
      const { client, primary, gateway } = get();
      const ask = async (cachedTokens: number | undefined) => {
        setCachedTokens!(primary, cachedTokens);
        const before = await ledger(gateway);
        const { data, response } = await client.chat.completions
          .create({ model: SINGLE_MODEL, messages: [{ role: 'user', content: 'a question long enough to hold a cached prefix of eight tokens' }] })
          .withResponse();
        const charged = await assertCharges(gateway, before, 1, requestIdOf(response));
        assert.equal(response.headers.get('x-gateway-cost-usd'), formatUsd(charged));
        return { usage: data.usage!, charged };
      };
      const uncached = await ask(undefined);
      const cached = await ask(8);
      assert.equal(cached.usage.prompt_tokens_details?.cached_tokens, 8);
      // Cached tokens are a part of the prompt, not more of it.
      assert.deepEqual([cached.usage.prompt_tokens, cached.usage.completion_tokens], [uncached.usage.prompt_tokens, uncached.usage.completion_tokens]);
      // By hand: the uncached prompt at 1 $/M, the 8 cached tokens at 0.1 $/M, the output at 2 $/M;
      // so 8 × 0.9 $/M less than the same call without a cache hit.
      const { prompt_tokens: prompt, completion_tokens: output } = cached.usage;
      assert.equal(cached.charged, routeCost(PRIMARY, { uncached: prompt - 8, cacheRead: 8, cacheWrite: 0, output }));
      assert.equal(uncached.charged - cached.charged, 8n * picosPerToken('0.9'));
    });

    test("a 500 from the first provider falls back to the second, charged once at the second's prices", async () => {
      const { client, primary, secondary, gateway } = get();
      const before = await ledger(gateway);
      const requests = [primary.requests.length, secondary.requests.length];
      primary.enqueue({ kind: 'status', status: 500 });
      const { data, response } = await client.chat.completions.create({ model: FALLBACK_MODEL, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
      assert.equal(data.choices[0].message.content, 'Echo: hi');
      assert.deepEqual([primary.requests.length - requests[0], secondary.requests.length - requests[1]], [1, 1]);
      assert.equal(identify(secondary.requests.at(-1)!).credential, 'sk-secondary');
      const charged = await assertCharges(gateway, before, 1, requestIdOf(response));
      assert.equal(response.headers.get('x-gateway-cost-usd'), formatUsd(charged));
      assert.equal(charged, costAt(SECONDARY, data.usage!));
    });

    test("a timeout on the first provider falls back to the second, charged once at the second's prices", async () => {
      const { client, primary, gateway } = get();
      const before = await ledger(gateway);
      primary.enqueue({ kind: 'delay', ms: 10_000 });
      const { data, response } = await client.chat.completions.create({ model: FALLBACK_MODEL, messages: [{ role: 'user', content: 'late' }] }).withResponse();
      assert.equal(data.choices[0].message.content, 'Echo: late');
      const charged = await assertCharges(gateway, before, 1, requestIdOf(response));
      assert.equal(response.headers.get('x-gateway-cost-usd'), formatUsd(charged));
      assert.equal(charged, costAt(SECONDARY, data.usage!));
    });

    const streamedFallbacks: readonly [string, Behaviour][] = [
      ['a 429 with retry-after', { kind: 'status', status: 429, headers: { 'retry-after': '1' } }],
      ['a connection reset before the first byte', { kind: 'reset', afterEvents: 0 }],
    ];
    for (const [name, behaviour] of streamedFallbacks) {
      test(`a streamed request falls back too while nothing was sent (${name}), charged once at the second's prices`, async () => {
        const { client, primary, secondary, gateway } = get();
        const before = await ledger(gateway);
        const requests = [primary.requests.length, secondary.requests.length];
        primary.enqueue(behaviour);
        const { data: stream, response } = await client.chat.completions
          .create({ model: FALLBACK_MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } })
          .withResponse();
        const read = await readChatStream(stream);
        assert.equal(read.error, undefined);
        assert.equal(read.text, 'Echo: hi');
        assert.deepEqual([primary.requests.length - requests[0], secondary.requests.length - requests[1]], [1, 1]);
        const charged = await assertCharges(gateway, before, 1, requestIdOf(response));
        assert.equal(read.usage?.cost, formatUsd(charged));
        assert.equal(charged, costAt(SECONDARY, read.usage!));
      });
    }

    test('no fallback: a clean error, and the reservation is refunded', async () => {
      const { client, primary, gateway } = get();
      const before = await ledger(gateway);
      primary.enqueue({ kind: 'status', status: 503 });
      await assert.rejects(
        client.chat.completions.create({ model: SINGLE_MODEL, messages: [{ role: 'user', content: 'hi' }] }),
        (error: unknown) => error instanceof OpenAI.APIError && error.status === 503 && (error.error as { type?: string })?.type === 'api_error',
      );
      await assertCharges(gateway, before, 0);
    });

    test("the models list is not a fallback after credit is reserved: the chosen model's failure is final", async () => {
      const { client, primary, secondary, gateway } = get();
      const before = await ledger(gateway);
      const requests = [primary.requests.length, secondary.requests.length];
      primary.enqueue({ kind: 'status', status: 503 });
      const body = { model: SINGLE_MODEL, models: [FALLBACK_MODEL], messages: [{ role: 'user', content: 'hi' }] };
      await assert.rejects(
        client.chat.completions.create(body as OpenAI.ChatCompletionCreateParamsNonStreaming),
        (error: unknown) => error instanceof OpenAI.APIError && error.status === 503,
      );
      // FALLBACK_MODEL would have been served (its first route is the same primary, answering again).
      assert.deepEqual([primary.requests.length - requests[0], secondary.requests.length - requests[1]], [1, 0]);
      await assertCharges(gateway, before, 0);
    });

    for (const fault of MID_STREAM_FAULTS) {
      // Bounded: a gateway that never gave up on a silent upstream would otherwise hang the run.
      test(`no fallback, streaming, ${fault.name} mid-stream: partial text, an in-stream error, one charge for what was produced`, {
        timeout: 10 * PRIMARY_TIMEOUT_MS,
      }, async () => {
        const { client, primary, gateway } = get();
        const before = await ledger(gateway);
        primary.enqueue(fault.behaviour);
        const { data: stream, response } = await client.chat.completions
          .create({ model: SINGLE_MODEL, messages: [{ role: 'user', content: LONG_PROMPT }], stream: true, stream_options: { include_usage: true } })
          .withResponse();
        const read = await readChatStream(stream);
        assert.ok(read.error instanceof OpenAI.APIError, `the stream ends in an error event, not ${String(read.error)}`);
        if (fault.code !== undefined) assert.equal(read.error.code, fault.code);
        const full = `Echo: ${LONG_PROMPT}`;
        assert.ok(read.text.length > 0 && read.text.length < full.length && full.startsWith(read.text), `partial text ${JSON.stringify(read.text)}`);
        assert.equal(read.finish, null);
        assert.equal(read.usage, undefined);
        const requestId = requestIdOf(response);
        const charged = await assertCharges(gateway, before, 1, requestId);
        // What was produced: the request log has the usage that was billed, on the route that served it.
        const row = await loggedRequest(gateway, requestId);
        assert.deepEqual([row.provider, row.status, row.errorCode, row.cost], ['primary', 'failed', read.error.code, charged]);
        assert.ok(row.outputTokens > 0, 'the streamed output is billed');
        assert.equal(
          charged,
          routeCost(PRIMARY, {
            uncached: row.inputTokens,
            cacheRead: row.cacheReadTokens,
            cacheWrite: row.cacheWriteTokens - (row.cacheWrite1hTokens ?? 0),
            cacheWrite1h: row.cacheWrite1hTokens ?? 0,
            output: row.outputTokens,
          }),
        );
      });
    }

    test('no fallback, streaming, failure before the first byte: an HTTP error, nothing charged', async () => {
      const { client, primary, gateway } = get();
      const before = await ledger(gateway);
      primary.enqueue({ kind: 'status', status: 500 });
      await assert.rejects(
        client.chat.completions.create({ model: SINGLE_MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true }),
        (error: unknown) => error instanceof OpenAI.APIError && error.status === 502,
      );
      await assertCharges(gateway, before, 0);
    });
  });

  return get;
}

export interface ReadStream {
  readonly chunks: readonly OpenAI.ChatCompletionChunk[];
  readonly text: string;
  readonly finish: string | null;
  /** The final usage chunk's usage, with the `cost` the gateway adds. */
  readonly usage: (OpenAI.CompletionUsage & { cost?: string }) | undefined;
  /** What the iteration threw: an in-stream error event surfaces as an APIError. */
  readonly error: unknown;
}

/** Reads a client stream to its end, keeping what it carried and how it ended. */
export async function readChatStream(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<ReadStream> {
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  let text = '';
  let finish: string | null = null;
  let usage: ReadStream['usage'];
  let error: unknown;
  try {
    for await (const chunk of stream) {
      chunks.push(chunk);
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
  } catch (thrown) {
    error = thrown;
  }
  return { chunks, text, finish, usage, error };
}

export interface TokenCounts {
  readonly uncached: number;
  readonly cacheRead: number;
  /** Cache writes for 5 minutes. */
  readonly cacheWrite: number;
  /** Cache writes for an hour (none when omitted). */
  readonly cacheWrite1h?: number;
  readonly output: number;
}

/**
 * What tokens cost on the route at `position` of chatModelsConfig, by hand: per million tokens,
 * input 1 + position USD, output 2 + position USD, cache reads 0.1 USD, cache writes 1.25 USD for
 * 5 minutes and 2 USD for an hour.
 */
export function routeCost(position: number, tokens: TokenCounts): bigint {
  return (
    BigInt(tokens.uncached) * picosPerToken(String(1 + position)) +
    BigInt(tokens.cacheRead) * picosPerToken('0.1') +
    BigInt(tokens.cacheWrite) * picosPerToken('1.25') +
    BigInt(tokens.cacheWrite1h ?? 0) * picosPerToken('2') +
    BigInt(tokens.output) * picosPerToken(String(2 + position))
  );
}

/** The cost of the usage a client was shown (prompt_tokens counts cached and cache-written tokens too). */
function costAt(position: number, usage: OpenAI.CompletionUsage): bigint {
  const cacheRead = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const cacheWrite = (usage.prompt_tokens_details as { cache_creation_tokens?: number } | undefined)?.cache_creation_tokens ?? 0;
  return routeCost(position, { uncached: usage.prompt_tokens - cacheRead - cacheWrite, cacheRead, cacheWrite, output: usage.completion_tokens });
}

/** The gateway request id a response carries (the key of its charge and its request log row). */
export function requestIdOf(response: Response): string {
  const id = response.headers.get('x-gateway-request-id');
  assert.ok(id, 'the response names its request');
  return id;
}

export async function loggedRequest(gateway: TestGateway, requestId: string): Promise<RequestLogRecord> {
  return eventually(async () => {
    await flushRequestLog(gateway);
    const row = await gateway.store.getRequest(requestId);
    assert.ok(row, `request ${requestId} is logged`);
    return row;
  });
}

export interface LedgerState {
  readonly balance: Awaited<ReturnType<TestGateway['store']['getBalance']>>;
  readonly entryIds: ReadonlySet<string>;
}

/** The test account's balance and the ids of its ledger entries, before a call. */
export async function ledger(gateway: TestGateway): Promise<LedgerState> {
  const owner = { kind: 'account', id: gateway.account.id } as const;
  const [balance, entries] = await Promise.all([gateway.store.getBalance(owner), gateway.store.listEntries(owner)]);
  return { balance, entryIds: new Set(entries.map((entry) => entry.id)) };
}

/**
 * Once settlement is done: exactly `count` new charges (each for `requestId` when given), the
 * balance lower by their sum and by nothing else, and no credit still reserved. Returns the sum.
 */
export async function assertCharges(gateway: TestGateway, before: LedgerState, count: 0 | 1, requestId?: string): Promise<bigint> {
  const settled = await settledLedger(gateway, before, count);
  assert.equal(settled.newCharges.length, count, `${count} new charge(s)`);
  if (requestId !== undefined) for (const charge of settled.newCharges) assert.equal(charge.requestId, requestId);
  const total = settled.newCharges.reduce((sum, charge) => sum + charge.amount, 0n);
  assert.equal(settled.balance.balance, before.balance.balance - total, 'the balance moved by the charges alone');
  return total;
}

/**
 * The ledger once settlement is done (it may be batched): no reservation open and the expected
 * number of new charges present. Gives up after 20 seconds (a bound for a busy machine).
 */
async function settledLedger(gateway: TestGateway, before: LedgerState, expectedCharges: number) {
  const owner = { kind: 'account', id: gateway.account.id } as const;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const [balance, entries] = await Promise.all([gateway.store.getBalance(owner), gateway.store.listEntries(owner)]);
    const newCharges = entries.filter((entry) => entry.kind === 'charge' && !before.entryIds.has(entry.id));
    const done = balance.reserved === 0n && newCharges.length >= expectedCharges;
    if (done || Date.now() > deadline) {
      assert.equal(balance.reserved, 0n, 'a reservation is still open');
      return { balance, newCharges };
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
