/**
 * `Idempotency-Key` on POST /v1/messages, with the chat semantics (docs/idempotency.md): a JSON
 * Message is replayed with its cost header and charged once; another body under the same key, and
 * any reuse of a streamed request's key, are 409s; the messages route keeps its own records.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { ledger, newCharges } from '../chat/helpers.ts';

const body = (text: string, extra: Record<string, unknown> = {}) => ({
  model: 'gateway/atlas-4-5',
  max_tokens: 64,
  messages: [{ role: 'user', content: text }],
  ...extra,
});

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`Idempotency-Key on POST /v1/messages (${engine})`, () => {
    let gateway: TestGateway;
    before(async () => {
      gateway = await startGateway({ engine });
    });
    after(() => gateway.close());

    const post = (key: string, json: unknown, path = '/v1/messages') =>
      call(gateway.baseUrl, 'POST', path, { headers: { 'x-api-key': gateway.apiKey, 'Idempotency-Key': key }, json });

    test('a repeated request replays the Message and its cost header, charged once', async () => {
      const key = randomUUID();
      const before = await ledger(gateway);
      const first = await post(key, body('hello'));
      assert.equal(first.status, 200, first.text);
      const replay = await post(key, body('hello'));
      assert.equal(replay.status, 200);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.equal(replay.text, first.text);
      assert.equal(replay.headers.get('x-gateway-cost-usd'), first.headers.get('x-gateway-cost-usd'));
      assert.equal((await newCharges(gateway, before)).length, 1);
    });

    test('another body under the same key is a 409 in the messages error shape', async () => {
      const key = randomUUID();
      assert.equal((await post(key, body('one'))).status, 200);
      const conflict = await post(key, body('two'));
      assert.equal(conflict.status, 409);
      assert.equal(conflict.body.type, 'error');
      assert.equal(conflict.body.error.code, 'idempotency_key_reused');
      assert.equal(conflict.body.error.param, 'idempotency-key');
    });

    test('a streamed success cannot be replayed: its key answers 409', async () => {
      const key = randomUUID();
      const stream = await post(key, body('stream me', { stream: true }));
      assert.equal(stream.status, 200);
      assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
      const again = await post(key, body('stream me', { stream: true }));
      assert.equal(again.status, 409);
      assert.equal(again.body.error.code, 'idempotency_not_replayable');
    });

    test('the same key on chat completions is another record', async () => {
      const key = randomUUID();
      assert.equal((await post(key, body('shared key'))).status, 200);
      const chat = await post(key, { model: 'gateway/atlas-4-5', messages: [{ role: 'user', content: 'other body' }] }, '/v1/chat/completions');
      assert.equal(chat.status, 200, chat.text);
      assert.equal(chat.headers.get('idempotent-replayed'), null);
    });
  });
}
