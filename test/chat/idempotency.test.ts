/**
 * `Idempotency-Key` on chat completions, end to end: the official `openai` client against the real
 * gateway, whose upstream is the OpenAI chat simulator (plus one upstream that holds its answer
 * until the test lets it go). Replays, the three 409s, retries after a failure, the header's
 * limits, and the storage-outage bypass, with the ledger checked each time, on both stores.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { usdToPicos } from '../../src/core/money.ts';
import { MAX_REPLAY_BYTES } from '../../src/http/idempotency.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import { startSimulator, type Simulator } from '../simulators/harness.ts';
import { chatErrorBody, startOpenAIChatSimulator, type OpenAIChatSimulator } from '../simulators/openai-chat.ts';
import { eventually, flushRequestLog, ledger, newCharges, openai } from './helpers.ts';

const MODEL = 'gateway/idempotent';
const HELD_MODEL = 'gateway/held';
const UPSTREAM_KEY = 'sk-upstream';

/** An upstream that answers only when the test opens its gate. */
interface HeldUpstream extends Simulator {
  readonly baseUrl: string;
  /** Holds the next answers; the returned function lets them go. */
  hold(): () => void;
}

async function startHeldUpstream(): Promise<HeldUpstream> {
  let gate: Promise<void> = Promise.resolve();
  const simulator = await startSimulator({
    async handle(request, reply) {
      await gate;
      reply.json(200, {
        id: 'chatcmpl-held',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: request.body.model,
        choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: 'held answer', refusal: null } }],
        usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
      });
    },
    errorBody: chatErrorBody,
    streamErrorEvent: (message) => ({ data: chatErrorBody(500, message) }),
  });
  return Object.assign(simulator, {
    baseUrl: `${simulator.origin}/v1`,
    hold() {
      let release!: () => void;
      gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      return release;
    },
  });
}

const keyed = (key: string) => ({ headers: { 'Idempotency-Key': key } });
const messages = (text: string): OpenAI.ChatCompletionMessageParam[] => [{ role: 'user', content: text }];

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`Idempotency-Key on POST /v1/chat/completions (${engine})`, () => {
    let gateway: TestGateway;
    let client: OpenAI;
    let upstream: OpenAIChatSimulator;
    let held: HeldUpstream;

    before(async () => {
      upstream = await startOpenAIChatSimulator({ apiKey: UPSTREAM_KEY });
      held = await startHeldUpstream();
      const provider = (id: string, sim: { baseUrl: string }) => ({ id, kind: 'openai' as const, baseUrl: sim.baseUrl, apiKeyEnv: 'UPSTREAM_KEY' });
      gateway = await startGateway({
        engine,
        config: chatModelsConfig({ [MODEL]: [provider('upstream', upstream)], [HELD_MODEL]: [provider('held', held)] }),
        env: { UPSTREAM_KEY },
        creditUsd: '10',
      });
      client = openai(gateway);
    });
    after(async () => {
      await gateway.close();
      await upstream.close();
      await held.close();
    });

    test('the same key and body: the second call is replayed, identical, without an upstream call or a charge', async () => {
      const key = randomUUID();
      const body = { model: MODEL, messages: messages('replay me') };
      const before = await ledger(gateway);
      const upstreamCalls = upstream.requests.length;

      const first = await client.chat.completions.create(body, keyed(key)).withResponse();
      const second = await client.chat.completions.create(body, keyed(key)).withResponse();

      assert.equal(first.response.headers.get('idempotent-replayed'), null);
      assert.equal(second.response.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(second.data, first.data);
      assert.equal(second.response.headers.get('x-gateway-cost-usd'), first.response.headers.get('x-gateway-cost-usd'));
      assert.match(second.response.headers.get('content-type') ?? '', /^application\/json/);
      // The replay is a request of its own.
      assert.notEqual(second.response.headers.get('x-gateway-request-id'), first.response.headers.get('x-gateway-request-id'));
      assert.equal(upstream.requests.length, upstreamCalls + 1);

      const charges = await newCharges(gateway, before);
      assert.equal(charges.length, 1);
      const after = await ledger(gateway);
      assert.equal(before.balance.balance - after.balance.balance, charges[0].amount);
      assert.equal(after.balance.reserved, 0n);

      // Both are in the key's request history: the replay as a completed request at no cost.
      await flushRequestLog(gateway);
      const original = await gateway.store.getRequest(first.response.headers.get('x-gateway-request-id')!);
      const replay = await gateway.store.getRequest(second.response.headers.get('x-gateway-request-id')!);
      assert.equal(original?.cost, charges[0].amount);
      assert.deepEqual([replay?.status, replay?.httpStatus, replay?.cost, replay?.inputTokens, replay?.keyId], ['completed', 200, 0n, 0, original?.keyId]);
      assert.deepEqual(replay?.output, JSON.parse(JSON.stringify(second.data)));
    });

    test('the body is compared as JSON: the same fields in another order replay', async () => {
      const key = randomUUID();
      const send = (text: string) =>
        call(gateway.baseUrl, 'POST', '/v1/chat/completions', {
          key: gateway.apiKey,
          headers: { 'idempotency-key': key, 'content-type': 'application/json' },
          body: text,
        });
      const first = await send(`{"model":"${MODEL}","messages":[{"role":"user","content":"order"}],"max_tokens":20}`);
      const second = await send(`{"max_tokens":20,"messages":[{"content":"order","role":"user"}],"model":"${MODEL}"}`);
      assert.equal(first.status, 200, first.text);
      assert.equal(second.headers.get('idempotent-replayed'), 'true');
      assert.equal(second.text, first.text);
    });

    test('the same key with another body is a 409 idempotency_key_reused', async () => {
      const key = randomUUID();
      await client.chat.completions.create({ model: MODEL, messages: messages('first body') }, keyed(key));
      const before = await ledger(gateway);
      await assert.rejects(
        client.chat.completions.create({ model: MODEL, messages: messages('second body') }, keyed(key)),
        (error: unknown) =>
          error instanceof OpenAI.APIError && error.status === 409 && error.code === 'idempotency_key_reused' && error.param === 'idempotency-key',
      );
      assert.deepEqual(await newCharges(gateway, before), []);
    });

    test('the same key under another API key is another record: neither replayed nor a conflict', async () => {
      const key = randomUUID();
      const other = openai(gateway, await gateway.createKey({ name: 'second key' }));
      const third = openai(gateway, await gateway.createKey({ name: 'third key' }));
      const body = { model: MODEL, messages: messages('two keys') };
      const before = await ledger(gateway);
      const answers = [
        await client.chat.completions.create(body, keyed(key)).withResponse(),
        await other.chat.completions.create(body, keyed(key)).withResponse(),
        await third.chat.completions.create({ model: MODEL, messages: messages('another body') }, keyed(key)).withResponse(),
      ];
      for (const { response } of answers) assert.equal(response.headers.get('idempotent-replayed'), null);
      assert.equal((await newCharges(gateway, before)).length, 3);
    });

    test('while the first request runs, the same key is a 409 idempotency_key_in_use; afterwards it replays', async () => {
      const key = randomUUID();
      const body = { model: HELD_MODEL, messages: messages('hold on') };
      const release = held.hold();
      const arrived = held.requests.length;
      const first = client.chat.completions.create(body, keyed(key)).withResponse();
      try {
        await eventually(async () => assert.equal(held.requests.length, arrived + 1));
        await assert.rejects(
          client.chat.completions.create(body, keyed(key)),
          (error: unknown) => error instanceof OpenAI.APIError && error.status === 409 && error.code === 'idempotency_key_in_use',
        );
      } finally {
        release();
      }
      const { data } = await first;
      assert.equal(data.choices[0].message.content, 'held answer');
      const replay = await client.chat.completions.create(body, keyed(key)).withResponse();
      assert.equal(replay.response.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(replay.data, data);
      assert.equal(held.requests.length, arrived + 1);
    });

    test('a streamed success cannot be replayed: the same key is a 409 idempotency_not_replayable', async () => {
      const key = randomUUID();
      const body = { model: MODEL, messages: messages('stream me'), stream: true as const };
      const stream = await client.chat.completions.create(body, keyed(key));
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      assert.equal(text, 'Echo: stream me');
      const before = await ledger(gateway);
      await assert.rejects(
        client.chat.completions.create(body, keyed(key)),
        (error: unknown) => error instanceof OpenAI.APIError && error.status === 409 && error.code === 'idempotency_not_replayable',
      );
      assert.deepEqual(await newCharges(gateway, before), []);
    });

    test('a JSON result over 300 KiB is not replayed either', async () => {
      const key = randomUUID();
      // About 310 KiB of words, echoed back by the simulator.
      const long = Array.from({ length: 3100 }, (_, index) => `${index}`.padEnd(100, 'x')).join(' ');
      const body = { model: MODEL, messages: messages(long) };
      const first = await client.chat.completions.create(body, keyed(key));
      assert.ok((first.choices[0].message.content ?? '').length > MAX_REPLAY_BYTES);
      await assert.rejects(
        client.chat.completions.create(body, keyed(key)),
        (error: unknown) => error instanceof OpenAI.APIError && error.status === 409 && error.code === 'idempotency_not_replayable',
      );
    });

    test('after an upstream failure the same key runs again', async () => {
      const key = randomUUID();
      const body = { model: MODEL, messages: messages('try again') };
      upstream.enqueue({ kind: 'status', status: 500 });
      await assert.rejects(client.chat.completions.create(body, keyed(key)), (error: unknown) => error instanceof OpenAI.APIError && error.status >= 500);
      const before = await ledger(gateway);
      const retry = await client.chat.completions.create(body, keyed(key)).withResponse();
      assert.equal(retry.response.headers.get('idempotent-replayed'), null);
      assert.equal(retry.data.choices[0].message.content, 'Echo: try again');
      assert.equal((await newCharges(gateway, before)).length, 1);
      const replay = await client.chat.completions.create(body, keyed(key)).withResponse();
      assert.equal(replay.response.headers.get('idempotent-replayed'), 'true');
    });

    test('after a 402 the same key runs again once there is credit', async () => {
      const account = await gateway.store.createAccount({ name: 'empty account' });
      const owner = { kind: 'account' as const, id: account.id };
      const poor = openai(gateway, await gateway.createKey({ owner }));
      const key = randomUUID();
      const body = { model: MODEL, messages: messages('no credit yet') };
      await assert.rejects(poor.chat.completions.create(body, keyed(key)), (error: unknown) => error instanceof OpenAI.APIError && error.status === 402);
      await gateway.store.addCredit(owner, usdToPicos('1'), 'test credit');
      const retry = await poor.chat.completions.create(body, keyed(key)).withResponse();
      assert.equal(retry.response.status, 200);
      assert.equal(retry.response.headers.get('idempotent-replayed'), null);
    });

    test('a key of 1..255 characters is accepted; an empty or longer one is a 400 naming the header', async () => {
      const send = (key: string) =>
        call(gateway.baseUrl, 'POST', '/v1/chat/completions', {
          key: gateway.apiKey,
          headers: { 'idempotency-key': key },
          json: { model: MODEL, messages: messages('limits') },
        });
      const longest = await send(`${randomUUID()}`.padEnd(255, 'k'));
      assert.equal(longest.status, 200, longest.text);
      for (const key of ['k'.repeat(256), '']) {
        assertError(await send(key), { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'idempotency-key' });
      }
    });

    test('without the header nothing changes: every call runs and is charged', async () => {
      const body = { model: MODEL, messages: messages('no key') };
      const before = await ledger(gateway);
      for (let i = 0; i < 2; i++) {
        const { response } = await client.chat.completions.create(body).withResponse();
        assert.equal(response.headers.get('idempotent-replayed'), null);
      }
      assert.equal((await newCharges(gateway, before)).length, 2);
    });

    test('when the idempotency storage is down, the request runs without deduplication', async () => {
      const key = randomUUID();
      const body = { model: MODEL, messages: messages('storage outage') };
      const store = gateway.store;
      const begin = store.beginIdempotent;
      store.beginIdempotent = async () => {
        throw new Error('connection refused');
      };
      const before = await ledger(gateway);
      try {
        for (let i = 0; i < 2; i++) {
          const { response } = await client.chat.completions.create(body, keyed(key)).withResponse();
          assert.equal(response.headers.get('idempotent-replayed'), null);
        }
      } finally {
        store.beginIdempotent = begin;
      }
      assert.equal((await newCharges(gateway, before)).length, 2);
    });

    test('GET /openapi.json lists the optional header on chat completions', async () => {
      const response = await call(gateway.baseUrl, 'GET', '/openapi.json');
      const parameters: Array<{ in: string; name: string; required?: boolean; schema: { maxLength?: number } }> =
        response.body.paths['/v1/chat/completions'].post.parameters;
      const header = parameters.find((parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key');
      assert.ok(header, JSON.stringify(parameters));
      assert.equal(header.name, 'Idempotency-Key');
      assert.notEqual(header.required, true);
      assert.equal(header.schema.maxLength, 255);
    });
  });
}
