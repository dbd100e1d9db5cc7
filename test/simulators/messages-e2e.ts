/**
 * The end-to-end scenarios of the messages dialect over every upstream protocol: the official
 * Anthropic SDK, unchanged and pointed at the gateway's root, against the real gateway whose
 * providers are simulators of the protocol under test (or the built-in simulated provider). Each
 * protocol's e2e.test.ts calls `messagesEndToEndSuite` beside the chat suite.
 *
 * The models and prices are the chat suite's (chat-e2e.ts): FALLBACK_MODEL on two providers,
 * SINGLE_MODEL on the primary alone. Every scenario that reaches an upstream checks the ledger
 * exactly: one charge at the serving route's rates for the usage the client was shown, the balance
 * moved by it alone, nothing left reserved.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { formatUsd } from '../../src/core/money.ts';
import {
  assertCharges,
  FALLBACK_MODEL,
  ledger,
  LONG_PROMPT,
  loggedRequest,
  PRIMARY,
  PRIMARY_TIMEOUT_MS,
  type ProtocolSimulator,
  requestIdOf,
  routeCost,
  SECONDARY,
  SINGLE_MODEL,
} from './chat-e2e.ts';
import {
  costShown,
  type DialectEndToEndContext,
  type DialectEndToEndSetup,
  dialectEndToEndGateway,
  faultsUnavailable,
  MID_STREAM_FAULTS,
} from './dialect-e2e.ts';

export interface MessagesEndToEndOptions<S extends ProtocolSimulator> extends DialectEndToEndSetup<S> {
  /** Whether the upstream signs its thinking and checks the signatures replayed to it (Anthropic). */
  readonly signsThinking?: boolean;
  /** False for protocols whose models take an effort level: a thinking budget is then a 400 (default true). */
  readonly budgetThinking?: boolean;
}

export type MessagesEndToEndContext<S extends ProtocolSimulator = ProtocolSimulator> = DialectEndToEndContext<S, Anthropic>;

const TOOLS: Anthropic.Tool[] = [
  {
    name: 'get_weather',
    description: 'The weather in a city',
    input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
];

/** Runs the shared scenarios; returns a getter for protocol-specific tests in the same file. */
export function messagesEndToEndSuite<S extends ProtocolSimulator>(options: MessagesEndToEndOptions<S>): () => MessagesEndToEndContext<S> {
  // The SDK's own base: the gateway's root, no `/v1`.
  const get = dialectEndToEndGateway(options, (gateway) => new Anthropic({ apiKey: gateway.apiKey, baseURL: gateway.baseUrl, maxRetries: 0 }));
  const faults = faultsUnavailable(options);

  describe(`messages over ${options.kind}`, () => {
    test('messages.create: a Message of the model served, its usage charged exactly, the cost in the header and in usage', async () => {
      const { client, gateway } = get();
      const before = await ledger(gateway);
      const { data, response } = await client.messages
        .create({ model: SINGLE_MODEL, max_tokens: 256, system: 'Be brief.', messages: [{ role: 'user', content: 'hello there' }] })
        .withResponse();
      assert.match(data.id, /^msg_/);
      assert.deepEqual([data.type, data.role, data.model, data.stop_reason, data.stop_sequence], ['message', 'assistant', SINGLE_MODEL, 'end_turn', null]);
      assert.equal(data.content.length, 1);
      assert.ok(data.content[0].type === 'text' && data.content[0].text.includes('hello there'), JSON.stringify(data.content));
      assert.ok(data.usage.input_tokens > 0 && data.usage.output_tokens > 0);
      const charged = await assertCharges(gateway, before, 1, requestIdOf(response));
      assert.equal(response.headers.get('x-gateway-cost-usd'), formatUsd(charged));
      assert.equal(costShown(data.usage), formatUsd(charged));
      assert.equal(charged, costAt(PRIMARY, data.usage));
    });

    test('messages.stream: text events, finalMessage, and a final usage whose cost is the ledger charge', async () => {
      const { client, gateway } = get();
      const before = await ledger(gateway);
      const stream = client.messages.stream({ model: SINGLE_MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'one two three' }] });
      const texts: string[] = [];
      const events: string[] = [];
      let finalUsage: unknown;
      stream.on('text', (text) => texts.push(text));
      stream.on('streamEvent', (event) => {
        events.push(event.type);
        if (event.type === 'message_delta') finalUsage = event.usage;
      });
      const { response } = await stream.withResponse();
      const message = await stream.finalMessage();
      assert.equal(events[0], 'message_start');
      assert.deepEqual(events.slice(-2), ['message_delta', 'message_stop']);
      assert.ok(texts.length > 1, 'the text arrives in pieces');
      assert.equal(message.content.length, 1);
      assert.ok(message.content[0].type === 'text');
      assert.equal(message.content[0].text, texts.join(''));
      assert.ok(message.content[0].text.includes('one two three'));
      assert.equal(message.stop_reason, 'end_turn');
      const charged = await assertCharges(gateway, before, 1, requestIdOf(response));
      assert.equal(costShown(finalUsage), formatUsd(charged));
      assert.equal(charged, costAt(PRIMARY, message.usage));
    });

    test('tool loop: tool_use with its input as an object, then the tool_result closes the loop', async () => {
      const { client } = get();
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
      const first = await client.messages.create({ model: SINGLE_MODEL, max_tokens: 256, messages, tools: TOOLS });
      assert.equal(first.stop_reason, 'tool_use');
      const call = first.content.find((block) => block.type === 'tool_use');
      assert.ok(call);
      assert.equal(call.name, 'get_weather');
      assert.equal(typeof (call.input as { city?: unknown }).city, 'string');
      messages.push(
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '18C and sunny' }] },
      );
      const second = await client.messages.create({ model: SINGLE_MODEL, max_tokens: 256, messages, tools: TOOLS });
      assert.equal(second.stop_reason, 'end_turn');
      assert.ok(
        second.content.some((block) => block.type === 'text' && block.text.includes('18C and sunny')),
        JSON.stringify(second.content),
      );
    });

    test('streamed tool call: inputJson events accumulate, finalMessage has the parsed input', async () => {
      const { client } = get();
      const stream = client.messages.stream({ model: SINGLE_MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'Look it up' }], tools: TOOLS });
      let snapshot: unknown;
      stream.on('inputJson', (_partial, json) => (snapshot = json));
      const message = await stream.finalMessage();
      assert.equal(message.stop_reason, 'tool_use');
      const call = message.content.find((block) => block.type === 'tool_use');
      assert.ok(call);
      assert.equal(typeof (call.input as { city?: unknown }).city, 'string');
      assert.deepEqual(snapshot, call.input);
    });

    test('a thinking budget where the model takes an effort level: 400 naming thinking, before any upstream call', {
      skip: options.budgetThinking !== false && 'the model takes a thinking budget',
    }, async () => {
      const { client, primary, gateway } = get();
      const before = await ledger(gateway);
      const requests = primary?.requests.length;
      await assert.rejects(
        client.messages.create({
          model: SINGLE_MODEL,
          max_tokens: 4096,
          thinking: { type: 'enabled', budget_tokens: 1024 },
          messages: [{ role: 'user', content: 'hi' }],
        }),
        (error: unknown) => error instanceof Anthropic.BadRequestError && (error.error as { error?: { param?: unknown } }).error?.param === 'thinking',
      );
      assert.equal(primary?.requests.length, requests);
      await assertCharges(gateway, before, 0);
    });

    for (const streamed of [false, true]) {
      test(`thinking in a tool loop (${streamed ? 'streamed' : 'whole'}): the content replayed as received closes the loop`, {
        skip: options.budgetThinking === false && 'the model takes an effort level, not a thinking budget',
      }, async () => {
        const { client, primary } = get();
        const body = (messages: Anthropic.MessageParam[]) => ({
          model: SINGLE_MODEL,
          max_tokens: 4096,
          thinking: { type: 'enabled' as const, budget_tokens: 1024 },
          tools: TOOLS,
          messages,
        });
        const ask = (messages: Anthropic.MessageParam[]) =>
          streamed ? client.messages.stream(body(messages)).finalMessage() : client.messages.create(body(messages));
        const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
        const first = await ask(messages);
        assert.equal(first.stop_reason, 'tool_use');
        const call = first.content.find((block) => block.type === 'tool_use');
        assert.ok(call);
        const thinking = first.content.filter((block) => block.type === 'thinking');
        if (options.signsThinking) {
          assert.equal(first.content[0].type, 'thinking', 'the thinking comes first');
          assert.ok(thinking.length === 1 && thinking[0].signature !== '' && thinking[0].thinking !== '', JSON.stringify(thinking));
        }
        messages.push(
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '18C and sunny' }] },
        );
        const second = await ask(messages);
        assert.ok(
          second.content.some((block) => block.type === 'text' && block.text.includes('18C and sunny')),
          JSON.stringify(second.content),
        );
        if (options.signsThinking) {
          // The upstream got the thinking block back unchanged, first in the turn that called the tool.
          const replayed = primary?.requests.at(-1)?.body.messages[1].content;
          assert.deepEqual(replayed[0], { type: 'thinking', thinking: thinking[0].thinking, signature: thinking[0].signature });
        }
      });
    }

    test("fallback before the first byte: a 500 from the first provider, answered and charged once at the second's prices", { skip: faults }, async () => {
      const { client, primary, secondary, gateway } = get();
      const before = await ledger(gateway);
      const requests = [primary!.requests.length, secondary!.requests.length];
      primary!.enqueue({ kind: 'status', status: 500 });
      const { data, response } = await client.messages
        .create({ model: FALLBACK_MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'hi' }] })
        .withResponse();
      assert.ok(data.content[0].type === 'text' && data.content[0].text.includes('hi'));
      assert.deepEqual([primary!.requests.length - requests[0], secondary!.requests.length - requests[1]], [1, 1]);
      const charged = await assertCharges(gateway, before, 1, requestIdOf(response));
      assert.equal(response.headers.get('x-gateway-cost-usd'), formatUsd(charged));
      assert.equal(charged, costAt(SECONDARY, data.usage));
    });

    test('streamed fallback before the first byte: a 429 from the first provider, the stream from the second, charged at its prices', {
      skip: faults,
    }, async () => {
      const { client, primary, secondary, gateway } = get();
      const before = await ledger(gateway);
      const requests = [primary!.requests.length, secondary!.requests.length];
      primary!.enqueue({ kind: 'status', status: 429, headers: { 'retry-after': '1' } });
      const stream = client.messages.stream({ model: FALLBACK_MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'hi' }] });
      const { response } = await stream.withResponse();
      const message = await stream.finalMessage();
      assert.ok(message.content[0].type === 'text' && message.content[0].text.includes('hi'));
      assert.deepEqual([primary!.requests.length - requests[0], secondary!.requests.length - requests[1]], [1, 1]);
      const charged = await assertCharges(gateway, before, 1, requestIdOf(response));
      assert.equal(charged, costAt(SECONDARY, message.usage));
    });

    test('no fallback: the SDK reports the status and message, nothing is charged', { skip: faults }, async () => {
      const { client, primary, gateway } = get();
      const before = await ledger(gateway);
      primary!.enqueue({ kind: 'status', status: 503 });
      await assert.rejects(
        client.messages.create({ model: SINGLE_MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'hi' }] }),
        (error: unknown) => error instanceof Anthropic.APIError && error.status === 503 && error.message.length > 0,
      );
      await assertCharges(gateway, before, 0);
    });

    for (const fault of MID_STREAM_FAULTS) {
      test(`${fault.name} mid-stream: partial text, an error event the SDK throws, one charge for what was produced`, {
        skip: faults,
        timeout: 10 * PRIMARY_TIMEOUT_MS,
      }, async () => {
        const { client, primary, gateway } = get();
        const before = await ledger(gateway);
        primary!.enqueue(fault.behaviour);
        const stream = client.messages.stream({ model: SINGLE_MODEL, max_tokens: 256, messages: [{ role: 'user', content: LONG_PROMPT }] });
        let text = '';
        stream.on('text', (delta) => (text += delta));
        const { response } = await stream.withResponse();
        await assert.rejects(stream.finalMessage(), (error: unknown) => error instanceof Anthropic.APIError && error.message.length > 0);
        assert.ok(text.length > 0 && !text.includes(LONG_PROMPT), `partial text ${JSON.stringify(text)}`);
        const requestId = requestIdOf(response);
        const charged = await assertCharges(gateway, before, 1, requestId);
        const row = await loggedRequest(gateway, requestId);
        assert.deepEqual([row.provider, row.status, row.cost], ['primary', 'failed', charged]);
        assert.ok(row.outputTokens > 0, 'the streamed output is billed');
        assert.equal(
          charged,
          routeCost(PRIMARY, { uncached: row.inputTokens, cacheRead: row.cacheReadTokens, cacheWrite: row.cacheWriteTokens, output: row.outputTokens }),
        );
      });
    }

    test('streamed, failure before the first byte without fallback: an HTTP error, nothing charged', { skip: faults }, async () => {
      const { client, primary, gateway } = get();
      const before = await ledger(gateway);
      primary!.enqueue({ kind: 'status', status: 500 });
      const stream = client.messages.stream({ model: SINGLE_MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'hi' }] });
      await assert.rejects(stream.finalMessage(), (error: unknown) => error instanceof Anthropic.APIError && error.status === 502);
      await assertCharges(gateway, before, 0);
    });
  });

  return get;
}

/** What a Message's usage costs on the route at `position`: Messages counts the three input parts apart. */
export function costAt(position: number, usage: Anthropic.Usage): bigint {
  // Writes for an hour are billed at their own rate; the rest of the writes at the 5-minute rate.
  const cacheWrite1h = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  return routeCost(position, {
    uncached: usage.input_tokens,
    cacheRead: usage.cache_read_input_tokens ?? 0,
    cacheWrite: (usage.cache_creation_input_tokens ?? 0) - cacheWrite1h,
    cacheWrite1h,
    output: usage.output_tokens,
  });
}
