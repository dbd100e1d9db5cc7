/**
 * Requests per minute and concurrent requests of a key, end to end on one instance (the counters
 * in memory, and in Redis): a burst gets exactly
 * the limit, the refused ones get 429 with the limit's code and Retry-After and move no money,
 * admitted answers carry the rate-limit headers, every keyed endpoint counts, streams hold their
 * slot until they end.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { endpoint, eventually, model, simulatedConfig } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { RESPONSE_RUNNING, untilEnded } from '../helpers/jobs.ts';
import { deleteRedisKeys, LIMIT_SETUPS, TEST_REDIS_URL, testRedisPrefix } from '../helpers/redis.ts';

const CHUNK_DELAY_MS = 40;
const config = simulatedConfig([model('gateway/limited', [endpoint('sim-limited')])], {
  providers: [{ id: 'sim', kind: 'simulated', simulated: { chunk_delay_ms: CHUNK_DELAY_MS } }],
});

const chat = (stream = false) => ({ model: 'gateway/limited', stream, messages: [{ role: 'user', content: 'Count me.' }] });

const prefix = testRedisPrefix();
after(() => deleteRedisKeys(prefix));

for (const [engine, counters] of LIMIT_SETUPS) {
  describe(`counted limits of a key (${engine}, counters in ${counters})`, () => {
    let gateway: TestGateway;
    before(async () => {
      gateway = await startGateway({ config, engine, redis: counters === 'redis' ? { url: TEST_REDIS_URL, prefix } : undefined });
    });
    after(() => gateway?.close());

    test('a burst over requests_per_minute gets exactly the limit; the others a 429 that says when to retry', async () => {
      const key = await gateway.createKey({ limits: { requests_per_minute: 5 } });
      const answers = await Promise.all(Array.from({ length: 12 }, () => call(gateway.app, 'GET', '/v1/models', { key })));
      const admitted = answers.filter((answer) => answer.status === 200);
      assert.equal(admitted.length, 5);
      for (const answer of answers.filter((answer) => answer.status !== 200)) {
        assertError(answer, { status: 429, type: 'rate_limit_error', code: 'requests_per_minute_exceeded' });
        // One request every 12 s drains in: the next one fits in at most 12 s.
        const retryAfter = Number(answer.headers.get('retry-after'));
        assert.ok(retryAfter >= 1 && retryAfter <= 12, `Retry-After ${retryAfter}`);
      }
      for (const answer of admitted) assert.equal(answer.headers.get('x-ratelimit-limit-requests'), '5');
      const remaining = admitted.map((answer) => Number(answer.headers.get('x-ratelimit-remaining-requests'))).sort();
      assert.deepEqual(remaining, [0, 1, 2, 3, 4]);
      assert.match(admitted[0].headers.get('x-ratelimit-reset-requests') ?? '', /^\d+(ms|s|m\d+s)$/);
    });

    test('every keyed endpoint counts, free ones included; a refused chat holds and charges nothing', async () => {
      const key = await gateway.createKey({ limits: { requests_per_minute: 3 } });
      assert.equal((await call(gateway.app, 'GET', '/v1/models', { key })).status, 200);
      const counted = await call(gateway.app, 'POST', '/v1/messages/count_tokens', {
        key,
        json: { model: 'gateway/limited', messages: [{ role: 'user', content: 'hi' }] },
      });
      assert.equal(counted.status, 200, counted.text);
      const owner = { kind: 'account', id: gateway.account.id } as const;
      const before = await gateway.store.getBalance(owner);
      assert.equal((await call(gateway.app, 'POST', '/v1/chat/completions', { key, json: chat() })).status, 200);
      const afterOne = await gateway.store.getBalance(owner);
      assert.ok(afterOne.balance < before.balance, 'the admitted chat is charged');
      const refused = await call(gateway.app, 'POST', '/v1/chat/completions', { key, json: chat() });
      assertError(refused, { status: 429, type: 'rate_limit_error', code: 'requests_per_minute_exceeded' });
      assert.deepEqual(await gateway.store.getBalance(owner), afterOne);
      // The other keys of the account are not limited by this one's counters.
      const free = await call(gateway.app, 'GET', '/v1/models', { key: gateway.apiKey });
      assert.equal(free.status, 200);
      assert.equal(free.headers.get('x-ratelimit-limit-requests'), null, 'a key without limits gets no headers');
    });

    test('concurrent_requests: a background response hands its slot to its job, whose end frees it', async () => {
      const key = await gateway.createKey({ limits: { concurrent_requests: 1 } });
      const submitted = await call(gateway.app, 'POST', '/v1/responses', {
        key,
        json: { model: 'gateway/limited', input: 'In the background.', background: true },
      });
      assert.equal(submitted.status, 200, submitted.text);
      const polled = await untilEnded(
        async () => {
          const answer = await call(gateway.app, 'GET', `/v1/responses/${submitted.body.id}`, { key });
          // A poll while the job runs is refused: the job holds the key's one slot.
          return answer.status === 429 ? { status: 'in_progress' } : answer.body;
        },
        RESPONSE_RUNNING,
        'the background response',
      );
      assert.equal(polled.status, 'completed');
      // Its end freed the slot (else the key would stay blocked for the job's lifetime).
      await eventually(async () => {
        const answer = await call(gateway.app, 'GET', '/v1/models', { key });
        assert.equal(answer.status, 200, answer.text);
      });
    });

    test('tokens_per_minute: the tokens of a background response are counted when its job settles', async () => {
      const startedAt = Date.now();
      const limits = { tokens_per_minute: 60 };
      const key = await gateway.createKey({ limits });
      const submitted = await call(gateway.app, 'POST', '/v1/responses', {
        key,
        json: { model: 'gateway/limited', input: 'Count my tokens.', background: true },
      });
      assert.equal(submitted.status, 200, submitted.text);
      const polled = await untilEnded(
        async () => (await call(gateway.app, 'GET', `/v1/responses/${submitted.body.id}`, { key })).body,
        RESPONSE_RUNNING,
        'the background response',
      );
      assert.equal(polled.status, 'completed', JSON.stringify(polled));
      const used = polled.usage.total_tokens as number;
      const keyId = (await gateway.store.listKeys()).find((record) => JSON.stringify(record.limits) === JSON.stringify(limits))!.id;
      // The settlement counts the tokens a moment after the job's end is visible.
      const tokens = await eventually(async () => {
        const counter = (await gateway.deps.limiter.usage('key', keyId, limits)).find((each) => each.limit === 'tokens_per_minute')!;
        assert.notEqual(counter.remaining, 60, 'the settled tokens are counted');
        return counter;
      });
      // 60 per minute drain one a second: what drained is at most the seconds this test took.
      const drained = Math.ceil((Date.now() - startedAt) / 1000);
      assert.ok(tokens.remaining >= 60 - used && tokens.remaining <= 60 - used + drained, `remaining ${tokens.remaining} after ${used} tokens in ${drained} s`);
    });

    test('concurrent_requests: streams hold their slot until they end', async () => {
      const key = await gateway.createKey({ limits: { concurrent_requests: 2 } });
      const streams = [0, 1].map(() =>
        fetch(`${gateway.baseUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(chat(true)),
        }),
      );
      const opened = await Promise.all(streams);
      for (const response of opened) assert.equal(response.status, 200);
      const third = await call(gateway.app, 'GET', '/v1/models', { key });
      assertError(third, { status: 429, type: 'rate_limit_error', code: 'concurrent_requests_exceeded' });
      assert.ok(Number(third.headers.get('retry-after')) >= 1);
      await Promise.all(opened.map((response) => response.text()));
      // The slot is freed as the response ends, a moment after the client has read it.
      await eventually(async () => assert.equal((await call(gateway.app, 'GET', '/v1/models', { key })).status, 200));
      const refusals = await call(gateway.app, 'GET', '/metrics');
      assert.match(refusals.text, /gateway_limit_refusals_total\{limit="concurrent_requests"\} [1-9]/);
    });
  });
}
