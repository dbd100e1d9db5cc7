/**
 * Spend limits (checked with the credit hold, counted from the ledger) and tokens per minute of a
 * key, end to end on both engines: a burst never spends past the cap, refusals name the limit and
 * move no money, the token limit is pre-checked with the prompt's estimate and counted at settlement.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { formatUsd, usdToPicos } from '../../src/core/money.ts';
import { endpoint, model, simulatedConfig } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { deleteRedisKeys, LIMIT_SETUPS, TEST_REDIS_URL, testRedisPrefix } from '../helpers/redis.ts';

const config = simulatedConfig([model('gateway/limited', [endpoint('sim-limited')])]);
const chat = { model: 'gateway/limited', max_tokens: 100, messages: [{ role: 'user', content: 'Count me.' }] };

const prefix = testRedisPrefix();
after(() => deleteRedisKeys(prefix));

for (const [engine, counters] of LIMIT_SETUPS) {
  describe(`spend and token limits of a key (${engine}, counters in ${counters})`, () => {
    let gateway: TestGateway;
    before(async () => {
      gateway = await startGateway({ config, engine, redis: counters === 'redis' ? { url: TEST_REDIS_URL, prefix } : undefined });
    });
    after(() => gateway?.close());

    /** What the key was charged, from the ledger. */
    async function chargedTo(keyId: string): Promise<bigint> {
      const entries = await gateway.store.listEntries({ kind: 'account', id: gateway.account.id });
      return entries.filter((entry) => entry.kind === 'charge' && entry.keyId === keyId).reduce((total, entry) => total + entry.amount, 0n);
    }

    async function keyIdOf(plaintext: string): Promise<string> {
      const keys = await gateway.store.listKeys({ kind: 'account', id: gateway.account.id });
      const { hashApiKey } = await import('../../src/auth/keys.ts');
      return keys.find((key) => key.hash === hashApiKey(plaintext))!.id;
    }

    for (const [field, code] of [
      ['spend_limit_usd', 'spend_limit_exceeded'],
      ['spend_per_day_usd', 'daily_spend_limit_exceeded'],
      ['spend_per_month_usd', 'monthly_spend_limit_exceeded'],
    ] as const) {
      test(`${field}: a burst of 40 never spends past the cap; the refused get 429 ${code}`, async () => {
        const cap = '0.001';
        const key = await gateway.createKey({ limits: { [field]: cap } });
        const answers = await Promise.all(Array.from({ length: 40 }, () => call(gateway.app, 'POST', '/v1/chat/completions', { key, json: chat })));
        const admitted = answers.filter((answer) => answer.status === 200);
        assert.ok(admitted.length >= 1);
        const refused = answers.filter((answer) => answer.status !== 200);
        assert.ok(refused.length >= 1);
        for (const answer of refused) {
          assertError(answer, { status: 429, type: 'rate_limit_error', code });
          assert.ok(Number(answer.headers.get('retry-after')) >= 1);
        }
        const charged = await chargedTo(await keyIdOf(key));
        const costs = admitted.reduce((total, answer) => total + usdToPicos(answer.headers.get('x-gateway-cost-usd')!), 0n);
        assert.equal(charged, costs, 'the ledger holds exactly the admitted answers’ costs');
        assert.ok(charged <= usdToPicos(cap), `charged ${formatUsd(charged)} of ${cap}`);
      });
    }

    test('the spend cap holds to the last pico-USD once reached, and a refusal changes no balance', async () => {
      const key = await gateway.createKey({ limits: { spend_limit_usd: '0.0003' } });
      const owner = { kind: 'account', id: gateway.account.id } as const;
      let answer = await call(gateway.app, 'POST', '/v1/chat/completions', { key, json: chat });
      let served = 0;
      while (answer.status === 200 && served < 50) {
        served += 1;
        answer = await call(gateway.app, 'POST', '/v1/chat/completions', { key, json: chat });
      }
      assertError(answer, { status: 429, type: 'rate_limit_error', code: 'spend_limit_exceeded' });
      const balance = await gateway.store.getBalance(owner);
      const again = await call(gateway.app, 'POST', '/v1/chat/completions', { key, json: chat });
      assert.equal(again.status, 429);
      assert.deepEqual(await gateway.store.getBalance(owner), balance);
      const charged = await chargedTo(await keyIdOf(key));
      // Each hold is the worst case (100 output tokens at 2 $/M + the prompt): one more no longer fits.
      assert.ok(charged <= usdToPicos('0.0003'));
      assert.ok(usdToPicos('0.0003') - charged < usdToPicos('0.000209'), `served ${served}, charged ${formatUsd(charged)}`);
    });

    test('tokens_per_minute: pre-checked with the prompt, counted at settlement, with the token headers', async () => {
      const key = await gateway.createKey({ limits: { tokens_per_minute: 60 } });
      const first = await call(gateway.app, 'POST', '/v1/chat/completions', { key, json: chat });
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers.get('x-ratelimit-limit-tokens'), '60');
      assert.equal(first.headers.get('x-ratelimit-remaining-tokens'), '60', 'nothing was counted before this call');
      const used = first.body.usage.total_tokens as number;
      assert.ok(used > 0);
      const statuses: number[] = [];
      let last = first;
      for (let i = 0; i < 10 && last.status === 200; i++) {
        last = await call(gateway.app, 'POST', '/v1/chat/completions', { key, json: chat });
        statuses.push(last.status);
      }
      assertError(last, { status: 429, type: 'rate_limit_error', code: 'tokens_per_minute_exceeded' });
      // Each call's tokens count once it is settled; the pre-check only needs the prompt to fit.
      const admitted = 1 + statuses.filter((status) => status === 200).length;
      assert.ok(admitted * used >= 60 - used && (admitted - 1) * used < 60, `admitted ${admitted} of ${used} tokens each`);
      // A free endpoint is not refused for tokens.
      assert.equal((await call(gateway.app, 'GET', '/v1/models', { key })).status, 200);
    });
  });
}
