/**
 * The end-to-end scenarios every chat upstream protocol must pass: the official `openai` client,
 * unchanged, against the real gateway (test/helpers/gateway.ts) whose providers are simulators of
 * the protocol under test. Each protocol's e2e.test.ts calls `chatEndToEndSuite` and adds the
 * scenarios that are its own.
 *
 * Two models are configured: FALLBACK_MODEL on two providers (primary first), SINGLE_MODEL on the
 * primary only (no fallback possible).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { ProviderConfig } from '../../src/config/schema.ts';
import { formatUsd } from '../../src/core/money.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { chatModelsConfig } from './gateway-config.ts';
import type { RecordedRequest, Simulator } from './harness.ts';

export const FALLBACK_MODEL = 'gateway/e2e-fallback';
export const SINGLE_MODEL = 'gateway/e2e-single';

/** What the suite needs from a simulator: the harness plus the provider base_url. */
export type ProtocolSimulator = Simulator & { readonly baseUrl: string };

export interface ChatEndToEndOptions {
  readonly kind: ProviderConfig['kind'];
  /** Starts a simulator that requires `Authorization`-style credentials equal to `apiKey`. */
  readonly startSimulator: (apiKey: string) => Promise<ProtocolSimulator>;
  /**
   * The upstream model name and credential a recorded request carries, for protocols whose wire
   * puts them elsewhere than the OpenAI formats (body `model`, `Authorization: Bearer`), the default.
   */
  readonly identify?: (request: RecordedRequest) => UpstreamIdentity;
}

export interface UpstreamIdentity {
  readonly model: unknown;
  readonly credential: unknown;
}

function openAIIdentity(request: RecordedRequest): UpstreamIdentity {
  return { model: request.body?.model, credential: request.headers.authorization?.replace(/^Bearer /, '') };
}

export interface ChatEndToEndContext {
  readonly gateway: TestGateway;
  readonly client: OpenAI;
  readonly primary: ProtocolSimulator;
  readonly secondary: ProtocolSimulator;
}

/** Runs the shared scenarios; returns a getter for protocol-specific tests in the same file. */
export function chatEndToEndSuite(options: ChatEndToEndOptions): () => ChatEndToEndContext {
  const identify = options.identify ?? openAIIdentity;
  let context: ChatEndToEndContext | undefined;
  const get = () => {
    assert.ok(context, 'the end-to-end gateway is not started');
    return context;
  };

  before(async () => {
    const primary = await options.startSimulator('sk-primary');
    const secondary = await options.startSimulator('sk-secondary');
    const provider = (id: string, sim: ProtocolSimulator, env: string) => ({ id, kind: options.kind, baseUrl: sim.baseUrl, apiKeyEnv: env });
    // A short timeout on the primary lets a delayed answer exercise timeout fallback; simulators
    // answer in milliseconds otherwise.
    const first = { ...provider('primary', primary, 'PRIMARY_KEY'), timeoutMs: 1_000 };
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
    for (const sim of [primary, secondary]) sim.setDefault({ kind: 'normal' });
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
        .create({ model: SINGLE_MODEL, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello there' }] })
        .withResponse();
      assert.equal(data.choices[0].message.content, 'Echo: hello there');
      assert.equal(data.choices[0].finish_reason, 'stop');
      assert.ok(data.usage && data.usage.prompt_tokens > 0 && data.usage.completion_tokens === 3);
      assert.deepEqual(identify(primary.requests.at(-1)!), { model: 'primary-model', credential: 'sk-primary' });
      const cost = response.headers.get('x-gateway-cost-usd');
      assert.ok(cost !== null && Number(cost) > 0, `cost header ${cost}`);
      const settled = await settledLedger(gateway, before, 1);
      assert.equal(settled.newCharges.length, 1);
      assert.equal(formatUsd(settled.newCharges[0].amount), cost);
    });

    test('streamed: text deltas, a finish, usage when asked', async () => {
      const { client } = get();
      const stream = await client.chat.completions.create({
        model: SINGLE_MODEL,
        messages: [{ role: 'user', content: 'one two three' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let finish: string | null = null;
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        usage = chunk.usage ?? usage;
      }
      assert.equal(text, 'Echo: one two three');
      assert.equal(finish, 'stop');
      assert.equal(usage?.completion_tokens, 4);
    });

    test('tool loop: a call, then the result closes the loop', async () => {
      const { client } = get();
      const tools: OpenAI.ChatCompletionTool[] = [{
        type: 'function',
        function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
      }];
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
          json_schema: { name: 'city', strict: true, schema: { type: 'object', properties: { name: { type: 'string' }, population: { type: 'integer' } }, required: ['name', 'population'], additionalProperties: false } },
        },
      });
      assert.deepEqual(JSON.parse(completion.choices[0].message.content ?? ''), { name: 'sample', population: 1 });
    });

    test('a 500 from the first provider falls back to the second', async () => {
      const { client, primary, secondary } = get();
      const before = [primary.requests.length, secondary.requests.length];
      primary.enqueue({ kind: 'status', status: 500 });
      const completion = await client.chat.completions.create({ model: FALLBACK_MODEL, messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(completion.choices[0].message.content, 'Echo: hi');
      assert.deepEqual([primary.requests.length - before[0], secondary.requests.length - before[1]], [1, 1]);
      assert.equal(identify(secondary.requests.at(-1)!).credential, 'sk-secondary');
    });

    test('a timeout on the first provider falls back to the second', async () => {
      const { client, primary } = get();
      primary.enqueue({ kind: 'delay', ms: 10_000 });
      const completion = await client.chat.completions.create({ model: FALLBACK_MODEL, messages: [{ role: 'user', content: 'late' }] });
      assert.equal(completion.choices[0].message.content, 'Echo: late');
    });

    test('a streamed request falls back too while nothing was sent (429 with retry-after)', async () => {
      const { client, primary } = get();
      primary.enqueue({ kind: 'status', status: 429, headers: { 'retry-after': '1' } });
      const stream = await client.chat.completions.create({ model: FALLBACK_MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      assert.equal(text, 'Echo: hi');
    });

    test('no fallback: a clean error, and the reservation is refunded', async () => {
      const { client, primary, gateway } = get();
      const before = await ledger(gateway);
      primary.enqueue({ kind: 'status', status: 503 });
      await assert.rejects(
        client.chat.completions.create({ model: SINGLE_MODEL, messages: [{ role: 'user', content: 'hi' }] }),
        (error: unknown) => error instanceof OpenAI.APIError && error.status === 503 && (error.error as { type?: string })?.type === 'api_error',
      );
      const settled = await settledLedger(gateway, before);
      assert.equal(settled.newCharges.length, 0);
      assert.equal(settled.balance.balance, before.balance.balance);
    });

    test('no fallback, streaming, failure mid-stream: an in-stream error the SDK raises', async () => {
      const { client, primary, gateway } = get();
      const before = await ledger(gateway);
      // Six wire events in, text is flowing in every protocol's format (the gateway may hold back
      // events that carry no content, so an earlier fault could still be reported as an HTTP error).
      primary.enqueue({ kind: 'stream-error', afterEvents: 6 });
      const stream = await client.chat.completions.create({
        model: SINGLE_MODEL,
        messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten' }],
        stream: true,
      });
      await assert.rejects(async () => {
        for await (const _chunk of stream);
      }, OpenAI.APIError);
      const settled = await settledLedger(gateway, before);
      assert.ok(settled.newCharges.length <= 1, 'charged at most once');
    });

    test('no fallback, streaming, failure before the first byte: an HTTP error', async () => {
      const { client, primary } = get();
      primary.enqueue({ kind: 'status', status: 500 });
      await assert.rejects(
        client.chat.completions.create({ model: SINGLE_MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true }),
        (error: unknown) => error instanceof OpenAI.APIError && error.status === 502,
      );
    });
  });

  return get;
}

interface LedgerState {
  readonly balance: Awaited<ReturnType<TestGateway['store']['getBalance']>>;
  readonly entryIds: ReadonlySet<string>;
}

async function ledger(gateway: TestGateway): Promise<LedgerState> {
  const owner = { kind: 'account', id: gateway.account.id } as const;
  const [balance, entries] = await Promise.all([gateway.store.getBalance(owner), gateway.store.listEntries(owner)]);
  return { balance, entryIds: new Set(entries.map((entry) => entry.id)) };
}

/**
 * The ledger once settlement is done (it may be batched): no reservation open and, when given, the
 * expected number of new charges present. Gives up after a bounded number of polls.
 */
async function settledLedger(gateway: TestGateway, before: LedgerState, expectedCharges?: number) {
  const owner = { kind: 'account', id: gateway.account.id } as const;
  for (let attempt = 0; ; attempt++) {
    const [balance, entries] = await Promise.all([gateway.store.getBalance(owner), gateway.store.listEntries(owner)]);
    const newCharges = entries.filter((entry) => entry.kind === 'charge' && !before.entryIds.has(entry.id));
    const done = balance.reserved === 0n && (expectedCharges === undefined || newCharges.length >= expectedCharges);
    if (done || attempt === 200) {
      assert.equal(balance.reserved, 0n, 'a reservation is still open');
      return { balance, newCharges };
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

