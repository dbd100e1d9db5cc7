/**
 * GET /v1/responses/{id} and Idempotency-Key on POST /v1/responses, on both stores: a response, JSON
 * or streamed, is read back by its owner from the request log (its id is the request id under the
 * `resp_` prefix); another owner, an unknown or malformed id, and a request that failed are the
 * same 404. The official `openai` client creates and retrieves. A JSON response is replayed with its
 * cost header and charged once; another body under the key and a streamed request's key are 409s.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { usdToPicos } from '../../src/core/money.ts';
import type { OwnerRef } from '../../src/storage/store.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { ledger, newCharges, openai } from '../chat/helpers.ts';

const MODEL = 'gateway/atlas-4-5';

/** The response object the last `response.*` event of a stream carries. */
function finalStreamedResponse(text: string): Record<string, any> {
  const objects = text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)))
    .filter((event) => event.response !== undefined);
  return objects.at(-1).response;
}

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`GET /v1/responses/{id} and Idempotency-Key (${engine})`, () => {
    let gateway: TestGateway;
    let stranger: string;
    before(async () => {
      gateway = await startGateway({ engine });
      const account = await gateway.store.createAccount({ name: 'stranger' });
      const owner: OwnerRef = { kind: 'account', id: account.id };
      await gateway.store.addCredit(owner, usdToPicos('10'), 'test credit');
      stranger = await gateway.createKey({ owner });
    });
    after(() => gateway.close());

    const post = (json: Record<string, unknown>, headers: Record<string, string> = {}) =>
      call(gateway.baseUrl, 'POST', '/v1/responses', { key: gateway.apiKey, headers, json: { model: MODEL, input: 'hello', ...json } });
    const get = (id: string, key = gateway.apiKey) => call(gateway.baseUrl, 'GET', `/v1/responses/${encodeURIComponent(id)}`, { key });
    const assertNotFound = async (id: string, key?: string) =>
      assertError(await get(id, key), { status: 404, type: 'invalid_request_error', code: 'not_found', param: null });

    test('metadata is echoed and kept with the response; store: false answers as usual but keeps nothing to retrieve', async () => {
      const client = openai(gateway);
      const metadata = { order: 'A-17', 'é🙂': 'x'.repeat(512) };
      const kept = await client.responses.create({ model: MODEL, input: 'hello', metadata });
      // The SDK's Response type has no `store`; the wire object does.
      const stored = (response: object) => (response as Record<string, unknown>).store;
      assert.deepEqual([kept.metadata, stored(kept)], [metadata, true]);
      assert.deepEqual((await client.responses.retrieve(kept.id)).metadata, metadata);

      const before = await ledger(gateway);
      const unkept = await client.responses.create({ model: MODEL, input: 'hello', store: false, metadata: { a: 'b' } });
      assert.deepEqual([unkept.status, stored(unkept), unkept.metadata], ['completed', false, { a: 'b' }]);
      assert.equal((await newCharges(gateway, before)).length, 1, 'charged as any response');
      await assertNotFound(unkept.id);
      const streamed = await post({ stream: true, store: false });
      assert.equal(streamed.status, 200);
      await assertNotFound(finalStreamedResponse(streamed.text).id);

      assertError(await post({ store: false, background: true }), { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'store' });
      const tooMany = Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v']));
      assertError(await post({ metadata: tooMany }), { status: 400, type: 'invalid_request_error', param: 'metadata' });
      assertError(await post({ metadata: { ['k'.repeat(65)]: 'v' } }), { status: 400, type: 'invalid_request_error' });
      assertError(await post({ metadata: { k: 'v'.repeat(513) } }), { status: 400, type: 'invalid_request_error' });
      assertError(await post({ metadata: { k: 1 } }), { status: 400, type: 'invalid_request_error' });
    });

    test('the owner reads back exactly the object it got; its id is the request id under resp_', async () => {
      const created = await post({ max_output_tokens: 32 });
      assert.equal(created.status, 200, created.text);
      const requestId = created.headers.get('x-gateway-request-id')!;
      assert.equal(created.body.id, `resp_${requestId.slice('req_'.length)}`);
      const read = await get(created.body.id);
      assert.equal(read.status, 200, read.text);
      assert.deepEqual(read.body, created.body);
      // Another key of the same owner reads it too.
      const sibling = await gateway.createKey();
      assert.deepEqual((await get(created.body.id, sibling)).body, created.body);
    });

    test('a streamed response is retrievable: its final object', async () => {
      const streamed = await post({ stream: true });
      assert.equal(streamed.status, 200, streamed.text);
      const final = finalStreamedResponse(streamed.text);
      assert.equal(final.status, 'completed');
      // The row is queued before the stream's body ends, so a client that read the whole stream finds it.
      const read = await get(final.id);
      assert.equal(read.status, 200, read.text);
      assert.deepEqual(read.body, final);
    });

    test("another owner's id, an unknown id, a malformed one and a failed request's id are the same 404", async () => {
      const created = await post({});
      assert.equal(created.status, 200, created.text);
      await assertNotFound(created.body.id, stranger);
      await assertNotFound(`resp_${'0'.repeat(27)}`);
      await assertNotFound('resp_');
      await assertNotFound(created.headers.get('x-gateway-request-id')!);
      await assertNotFound(`msg_${created.body.id.slice('resp_'.length)}`);
      const refused = await post({ model: 'gateway/nope' });
      assert.equal(refused.status, 404);
      await assertNotFound(`resp_${refused.headers.get('x-gateway-request-id')!.slice('req_'.length)}`);
      // A chat completion's request id does not make it a response.
      const chat = await call(gateway.baseUrl, 'POST', '/v1/chat/completions', {
        key: gateway.apiKey,
        json: { model: MODEL, messages: [{ role: 'user', content: 'hi' }] },
      });
      assert.equal(chat.status, 200, chat.text);
      await assertNotFound(`resp_${chat.headers.get('x-gateway-request-id')!.slice('req_'.length)}`);
    });

    test('a key restricted to other scopes cannot create or read responses', async () => {
      const created = await post({});
      const chatOnly = await gateway.createKey({ scopes: ['chat'] });
      assert.equal((await get(created.body.id, chatOnly)).status, 403);
      assert.equal((await call(gateway.baseUrl, 'POST', '/v1/responses', { key: chatOnly, json: { model: MODEL, input: 'x' } })).status, 403);
      const responsesOnly = await gateway.createKey({ scopes: ['responses'] });
      assert.equal((await get(created.body.id, responsesOnly)).status, 200);
    });

    test('the openai SDK creates and retrieves', async () => {
      const client = openai(gateway);
      const response = await client.responses.create({ model: MODEL, input: 'Hello!', instructions: 'be brief', max_output_tokens: 64 });
      assert.equal(response.object, 'response');
      assert.ok(response.output_text.length > 0);
      const again = await client.responses.retrieve(response.id);
      assert.equal(again.id, response.id);
      assert.deepEqual(again.output, response.output);
      assert.equal(again.output_text, response.output_text);
      await assert.rejects(openai(gateway, stranger).responses.retrieve(response.id), (error: any) => error.status === 404);
    });

    test('a repeated request replays the object and its cost header, charged once; the replay keeps the original id', async () => {
      const key = randomUUID();
      const before = await ledger(gateway);
      const first = await post({ input: 'replay me' }, { 'Idempotency-Key': key });
      assert.equal(first.status, 200, first.text);
      const replay = await post({ input: 'replay me' }, { 'Idempotency-Key': key });
      assert.equal(replay.status, 200);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.equal(replay.text, first.text);
      assert.equal(replay.headers.get('x-gateway-cost-usd'), first.headers.get('x-gateway-cost-usd'));
      assert.equal((await newCharges(gateway, before)).length, 1);
      assert.deepEqual((await get(first.body.id)).body, first.body);
      await assertNotFound(`resp_${replay.headers.get('x-gateway-request-id')!.slice('req_'.length)}`);
    });

    test('another body under the key, and any reuse of a streamed request key, are 409s', async () => {
      const key = randomUUID();
      assert.equal((await post({ input: 'one' }, { 'Idempotency-Key': key })).status, 200);
      const conflict = await post({ input: 'two' }, { 'Idempotency-Key': key });
      assertError(conflict, { status: 409, type: 'invalid_request_error', code: 'idempotency_key_reused', param: 'idempotency-key' });
      const streamKey = randomUUID();
      assert.equal((await post({ stream: true }, { 'Idempotency-Key': streamKey })).status, 200);
      const again = await post({ stream: true }, { 'Idempotency-Key': streamKey });
      assert.equal(again.status, 409);
      assert.equal(again.body.error.code, 'idempotency_not_replayable');
    });
  });
}
