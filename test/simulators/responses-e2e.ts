/**
 * The end-to-end scenarios of the responses dialect over every upstream protocol: the official
 * `openai` SDK, unchanged and pointed at `{gateway}/v1`, against the real gateway whose providers are
 * simulators of the protocol under test (or the built-in simulated provider). Each protocol's
 * e2e.test.ts calls `responsesEndToEndSuite` beside the chat and messages suites.
 *
 * The models and prices are the chat suite's (chat-e2e.ts): FALLBACK_MODEL on two providers,
 * SINGLE_MODEL on the primary alone. Every scenario that reaches an upstream checks the ledger
 * exactly: one charge at the serving route's rates for the usage the client was shown, the balance
 * moved by it alone, nothing left reserved.
 */
import assert from 'node:assert/strict';
import { RESPONSE_RUNNING, untilEnded } from '../helpers/jobs.ts';
import { describe, test } from 'node:test';
import OpenAI from 'openai';
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

export interface ResponsesEndToEndOptions<S extends ProtocolSimulator> extends DialectEndToEndSetup<S> {
  /** False for upstreams that report reasoning tokens but return no reasoning text (OpenAI chat); default true. */
  readonly reasoningText?: boolean;
}

export type ResponsesEndToEndContext<S extends ProtocolSimulator = ProtocolSimulator> = DialectEndToEndContext<S, OpenAI>;

const TOOLS: OpenAI.Responses.FunctionTool[] = [
  {
    type: 'function',
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    strict: false,
  },
];

/** Runs the shared scenarios; returns a getter for protocol-specific tests in the same file. */
export function responsesEndToEndSuite<S extends ProtocolSimulator>(options: ResponsesEndToEndOptions<S>): () => ResponsesEndToEndContext<S> {
  const get = dialectEndToEndGateway(options, (gateway) => new OpenAI({ apiKey: gateway.apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 }));
  const faults = faultsUnavailable(options);

  describe(`responses over ${options.kind}`, () => {
    test('responses.create: a Response of the model served, its usage charged exactly, the cost in the header and in usage; retrieve returns it again', async () => {
      const { client, gateway } = get();
      const before = await ledger(gateway);
      const { data, response } = await client.responses
        .create({ model: SINGLE_MODEL, instructions: 'Be brief.', input: 'hello there', max_output_tokens: 256 })
        .withResponse();
      assert.match(data.id, /^resp_/);
      assert.deepEqual([data.object, data.model, data.status, data.error, data.incomplete_details], ['response', SINGLE_MODEL, 'completed', null, null]);
      assert.deepEqual(
        data.output.map((item) => item.type),
        ['message'],
      );
      assert.ok(data.output_text.includes('hello there'), data.output_text);
      assert.ok(data.usage!.input_tokens > 0 && data.usage!.output_tokens > 0);
      assert.equal(data.usage!.total_tokens, data.usage!.input_tokens + data.usage!.output_tokens);
      const charged = await assertCharges(gateway, before, 1, requestIdOf(response));
      assert.equal(response.headers.get('x-gateway-cost-usd'), formatUsd(charged));
      assert.equal(costShown(data.usage), formatUsd(charged));
      assert.equal(charged, costAt(PRIMARY, data.usage!));
      assert.deepEqual(wire(await client.responses.retrieve(data.id)), wire(data));
    });

    test('responses.stream: created first, text deltas, one terminal completed whose usage cost is the ledger charge; finalResponse; retrieve', async () => {
      const { client, gateway } = get();
      const before = await ledger(gateway);
      const stream = client.responses.stream({ model: SINGLE_MODEL, input: 'one two three' });
      const texts: string[] = [];
      const events: OpenAI.Responses.ResponseStreamEvent[] = [];
      stream.on('response.output_text.delta', (event) => texts.push(event.delta));
      stream.on('event', (event) => events.push(event));
      const final = await stream.finalResponse();
      assert.deepEqual(
        events.slice(0, 2).map((event) => event.type),
        ['response.created', 'response.in_progress'],
      );
      const terminal = events.at(-1)!;
      assert.equal(terminal.type, 'response.completed');
      assert.deepEqual(
        events.map((event) => event.sequence_number),
        events.map((_, index) => index),
      );
      assert.ok(texts.length > 1, 'the text arrives in pieces');
      assert.equal(final.output_text, texts.join(''));
      assert.ok(final.output_text.includes('one two three'));
      assert.equal(final.status, 'completed');
      const charged = await assertCharges(gateway, before, 1, requestIdOfResponse(final.id));
      assert.equal(costShown(final.usage), formatUsd(charged));
      assert.equal(charged, costAt(PRIMARY, final.usage!));
      assert.deepEqual(wire(await client.responses.retrieve(final.id)), wire(final));
    });

    for (const reasoning of [false, true]) {
      const streamed = reasoning;
      test(`tool loop${reasoning ? ' with reasoning, streamed' : ''}: a function_call item, its output items appended with a function_call_output close the loop`, async () => {
        const { client } = get();
        const effort = reasoning ? { reasoning: { effort: 'low' as const } } : {};
        const ask = (input: OpenAI.Responses.ResponseInput): Promise<OpenAI.Responses.Response> =>
          streamed
            ? client.responses.stream({ model: SINGLE_MODEL, input, tools: TOOLS, ...effort }).finalResponse()
            : client.responses.create({ model: SINGLE_MODEL, input, tools: TOOLS, ...effort });
        const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'Weather in Paris?' }];
        const first = await ask(input);
        assert.equal(first.status, 'completed');
        const call = first.output.find((item) => item.type === 'function_call');
        assert.ok(call, JSON.stringify(first.output));
        assert.equal(call.name, 'get_weather');
        assert.match(call.call_id, /./);
        assert.equal(typeof (JSON.parse(call.arguments) as { city?: unknown }).city, 'string');
        // The returned items go back as the SDK gives them (without the fields its parser adds).
        input.push(...(wire(first) as { output: OpenAI.Responses.ResponseInputItem[] }).output, {
          type: 'function_call_output',
          call_id: call.call_id,
          output: '18C and sunny',
        });
        const second = await ask(input);
        assert.equal(second.status, 'completed');
        assert.ok(second.output_text.includes('18C and sunny'), JSON.stringify(second.output));
      });
    }

    test('streamed tool call: argument deltas accumulate into the function_call of finalResponse', async () => {
      const { client } = get();
      const stream = client.responses.stream({ model: SINGLE_MODEL, input: 'Look it up', tools: TOOLS });
      let snapshot = '';
      let done: string | undefined;
      stream.on('response.function_call_arguments.delta', (event) => (snapshot = event.snapshot));
      stream.on('response.function_call_arguments.done', (event) => (done = event.arguments));
      const final = await stream.finalResponse();
      const call = final.output.find((item) => item.type === 'function_call');
      assert.ok(call);
      assert.equal(typeof (JSON.parse(call.arguments) as { city?: unknown }).city, 'string');
      assert.deepEqual([snapshot, done], [call.arguments, call.arguments]);
    });

    for (const streamed of [false, true]) {
      test(`max_output_tokens reached${streamed ? ', streamed' : ''}: status incomplete for max_output_tokens, charged for what was produced`, async () => {
        const { client, gateway } = get();
        const before = await ledger(gateway);
        const body = { model: SINGLE_MODEL, input: LONG_PROMPT, max_output_tokens: 3 };
        let data: OpenAI.Responses.Response;
        let requestId: string;
        if (streamed) {
          const stream = client.responses.stream(body);
          const terminal: string[] = [];
          stream.on('response.incomplete', (event) => terminal.push(event.type));
          data = await stream.finalResponse();
          requestId = requestIdOfResponse(data.id);
          assert.deepEqual(terminal, ['response.incomplete']);
        } else {
          const answer = await client.responses.create(body).withResponse();
          data = answer.data;
          requestId = requestIdOf(answer.response);
        }
        assert.deepEqual([data.status, data.incomplete_details], ['incomplete', { reason: 'max_output_tokens' }]);
        assert.ok(data.output_text.length > 0 && !data.output_text.includes(LONG_PROMPT), data.output_text);
        const charged = await assertCharges(gateway, before, 1, requestId);
        assert.equal(costShown(data.usage), formatUsd(charged));
        assert.equal(charged, costAt(PRIMARY, data.usage!));
      });
    }

    for (const streamed of [false, true]) {
      const text = options.reasoningText !== false;
      const what = text ? "a reasoning item with the upstream's reasoning text before the message" : 'no reasoning item where the upstream gives no text';
      test(`reasoning${streamed ? ', streamed' : ''}: ${what}, charged with its reasoning tokens`, async () => {
        const { client, gateway } = get();
        const before = await ledger(gateway);
        const body = { model: SINGLE_MODEL, input: 'Think about it', reasoning: { effort: 'low' as const } };
        let summary = '';
        let final: OpenAI.Responses.Response;
        if (streamed) {
          const stream = client.responses.stream(body);
          stream.on('response.reasoning_summary_text.delta', (event) => (summary += event.delta));
          final = await stream.finalResponse();
        } else {
          final = await client.responses.create(body);
        }
        assert.deepEqual(
          final.output.map((item) => item.type),
          text ? ['reasoning', 'message'] : ['message'],
        );
        assert.ok(final.usage!.output_tokens_details.reasoning_tokens > 0);
        const charged = await assertCharges(gateway, before, 1, requestIdOfResponse(final.id));
        assert.equal(charged, costAt(PRIMARY, final.usage!));
        if (!text) return;
        const reasoning = final.output[0] as OpenAI.Responses.ResponseReasoningItem;
        assert.equal(reasoning.summary.length, 1);
        assert.ok(reasoning.summary[0].text.length > 0);
        if (streamed) assert.equal(summary, reasoning.summary[0].text);
      });
    }

    test("fallback before the first byte: a 500 from the first provider, answered and charged once at the second's prices", { skip: faults }, async () => {
      const { client, primary, secondary, gateway } = get();
      const before = await ledger(gateway);
      const requests = [primary!.requests.length, secondary!.requests.length];
      primary!.enqueue({ kind: 'status', status: 500 });
      const { data, response } = await client.responses.create({ model: FALLBACK_MODEL, input: 'hi' }).withResponse();
      assert.ok(data.output_text.includes('hi'));
      assert.deepEqual([primary!.requests.length - requests[0], secondary!.requests.length - requests[1]], [1, 1]);
      const charged = await assertCharges(gateway, before, 1, requestIdOf(response));
      assert.equal(response.headers.get('x-gateway-cost-usd'), formatUsd(charged));
      assert.equal(charged, costAt(SECONDARY, data.usage!));
    });

    test('streamed fallback before the first byte: a 429 from the first provider, the stream from the second, charged at its prices', {
      skip: faults,
    }, async () => {
      const { client, primary, secondary, gateway } = get();
      const before = await ledger(gateway);
      const requests = [primary!.requests.length, secondary!.requests.length];
      primary!.enqueue({ kind: 'status', status: 429, headers: { 'retry-after': '1' } });
      const final = await client.responses.stream({ model: FALLBACK_MODEL, input: 'hi' }).finalResponse();
      assert.ok(final.output_text.includes('hi'));
      assert.deepEqual([primary!.requests.length - requests[0], secondary!.requests.length - requests[1]], [1, 1]);
      const charged = await assertCharges(gateway, before, 1, requestIdOfResponse(final.id));
      assert.equal(charged, costAt(SECONDARY, final.usage!));
    });

    test('no fallback: the SDK reports the status and message, nothing is charged', { skip: faults }, async () => {
      const { client, primary, gateway } = get();
      const before = await ledger(gateway);
      primary!.enqueue({ kind: 'status', status: 503 });
      await assert.rejects(
        client.responses.create({ model: SINGLE_MODEL, input: 'hi' }),
        (error: unknown) => error instanceof OpenAI.APIError && error.status === 503 && error.message.length > 0,
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
        const stream = client.responses.stream({ model: SINGLE_MODEL, input: LONG_PROMPT });
        let text = '';
        let id = '';
        stream.on('response.created', (event) => (id = event.response.id));
        stream.on('response.output_text.delta', (event) => (text += event.delta));
        await assert.rejects(stream.finalResponse(), (error: unknown) => error instanceof OpenAI.APIError && error.message.length > 0);
        assert.ok(text.length > 0 && !text.includes(LONG_PROMPT), `partial text ${JSON.stringify(text)}`);
        const requestId = requestIdOfResponse(id);
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
      const stream = client.responses.stream({ model: SINGLE_MODEL, input: 'hi' });
      await assert.rejects(stream.finalResponse(), (error: unknown) => error instanceof OpenAI.APIError && error.status === 502);
      await assertCharges(gateway, before, 0);
    });

    test('background: the queued object at once; retrieve polls it to completed; charged once, exactly, under the response id', async () => {
      const { client, gateway } = get();
      const before = await ledger(gateway);
      const queued = await client.responses.create({ model: SINGLE_MODEL, input: 'hello in the background', max_output_tokens: 256, background: true });
      assert.match(queued.id, /^resp_/);
      assert.deepEqual([queued.status, queued.background, queued.output, queued.usage ?? null], ['queued', true, [], null]);
      const final = await pollUntilEnded(client, queued.id);
      assert.equal(final.status, 'completed');
      assert.equal(final.background, true);
      assert.ok(final.output_text.includes('hello in the background'), final.output_text);
      const charged = await assertCharges(gateway, before, 1, requestIdOfResponse(queued.id));
      assert.equal(costShown(final.usage), formatUsd(charged));
      assert.equal(charged, costAt(PRIMARY, final.usage!));
      assert.deepEqual(wire(await client.responses.retrieve(queued.id)), wire(final), 'the ended object stays as it is');
    });

    test('background: cancel while the upstream works aborts the call (the simulator sees it go), nothing is charged; a second cancel is a 409', {
      skip: faults,
    }, async () => {
      const { client, gateway, primary } = get();
      const before = await ledger(gateway);
      const seen = primary!.requests.length;
      // Under the primary's timeout, so that only the cancel can end the call.
      primary!.enqueue({ kind: 'delay', ms: PRIMARY_TIMEOUT_MS - 100 });
      const queued = await client.responses.create({ model: SINGLE_MODEL, input: 'slow work', background: true });
      await until(() => primary!.requests.length > seen, 'the upstream call was made');
      const cancelled = await client.responses.cancel(queued.id);
      assert.equal(cancelled.status, 'cancelled');
      assert.equal(cancelled.id, queued.id);
      await until(() => primary!.abandoned.includes(primary!.requests[seen]), 'the upstream call was aborted');
      await assertCharges(gateway, before, 0);
      assert.equal((await client.responses.retrieve(queued.id)).status, 'cancelled');
      await assert.rejects(
        client.responses.cancel(queued.id),
        (error: unknown) => error instanceof OpenAI.APIError && error.status === 409 && error.code === 'invalid_state',
      );
    });

    test('background: an upstream failure ends the response as failed with its error, nothing charged', { skip: faults }, async () => {
      const { client, gateway, primary } = get();
      const before = await ledger(gateway);
      primary!.enqueue({ kind: 'status', status: 500, message: 'background failure' });
      const queued = await client.responses.create({ model: SINGLE_MODEL, input: 'will fail', background: true });
      const final = await pollUntilEnded(client, queued.id);
      assert.equal(final.status, 'failed');
      assert.equal(final.error?.code, 'upstream_error');
      await assertCharges(gateway, before, 0);
    });
  });

  return get;
}

/** Polls a background response with the SDK until it ends. */
function pollUntilEnded(client: OpenAI, id: string): Promise<OpenAI.Responses.Response> {
  return untilEnded(() => client.responses.retrieve(id), RESPONSE_RUNNING, `response ${id}`, { intervalMs: 10 });
}

/** Waits for a condition, polling every few milliseconds (bounded: 20 seconds, for a busy machine). */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`${what}: not within the bound`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * The gateway request id of a response (the key of its charge and request log row): the SDK's
 * stream helper does not expose the HTTP response, so it is read from the response id (docs/responses.md).
 */
function requestIdOfResponse(responseId: string): string {
  assert.match(responseId, /^resp_./);
  return `req_${responseId.slice('resp_'.length)}`;
}

/** What a Response's usage costs on the route at `position`: input_tokens counts the cache reads and writes too. */
export function costAt(position: number, usage: OpenAI.Responses.ResponseUsage): bigint {
  const cacheRead = usage.input_tokens_details.cached_tokens;
  const cacheWrite = usage.input_tokens_details.cache_write_tokens;
  return routeCost(position, { uncached: usage.input_tokens - cacheRead - cacheWrite, cacheRead, cacheWrite, output: usage.output_tokens });
}

/** A Response as the wire carries it: without what the SDK derives (`output_text`, the `parsed` fields of its parser). */
export function wire(response: object): unknown {
  const derived = new Set(['output_text', 'output_parsed', 'parsed', 'parsed_arguments']);
  return JSON.parse(JSON.stringify(response, (key, value) => (derived.has(key) ? undefined : value)));
}
