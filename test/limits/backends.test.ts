/**
 * The two counter backends (src/limits/memory-backend.ts, src/limits/redis-backend.ts) answer the
 * same admissions the same way: one contract, run against each; Redis at TEST_REDIS_URL, under a
 * random prefix whose keys are deleted afterwards. Then what a limiter does when Redis is away:
 * fail open (admitted, a warning and a metric) or closed (503 limits_unavailable).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { pino } from 'pino';
import type { AuthContext } from '../../src/auth/context.ts';
import { GatewayError } from '../../src/core/errors.ts';
import type { CounterCheck, LimitBackend } from '../../src/limits/backend.ts';
import { waitFor } from '../../src/limits/gcra.ts';
import { Limiter } from '../../src/limits/limiter.ts';
import { MemoryBackend } from '../../src/limits/memory-backend.ts';
import { RedisBackend } from '../../src/limits/redis-backend.ts';
import { eventually } from '../chat/helpers.ts';
import { deleteRedisKeys, TEST_REDIS_URL, testRedisPrefix } from '../helpers/redis.ts';

const prefix = testRedisPrefix();
after(() => deleteRedisKeys(prefix));

const backends: [string, () => LimitBackend][] = [
  ['memory', () => new MemoryBackend()],
  ['redis', () => new RedisBackend({ url: TEST_REDIS_URL, prefix })],
];

let scopes = 0;
const scope = () => `key:test_${++scopes}_${randomBytes(3).toString('hex')}`;

for (const [name, open] of backends) {
  describe(`${name} counters`, () => {
    const backend = open();
    // Redis never queues: a command sent before its connection is up fails at once.
    before(() => (backend instanceof RedisBackend ? backend.connected() : undefined));
    after(() => backend.close());

    test('a burst of requests gets exactly the limit, with the headers’ figures', async () => {
      const check: CounterCheck = { scope: scope(), holder: 'key', requestsPerMinute: 7 };
      const results = await Promise.all(Array.from({ length: 20 }, () => backend.admit({ checks: [check], requests: 1 })));
      const admitted = results.filter((result) => result.admitted);
      assert.equal(admitted.length, 7);
      const remaining = admitted.map((result) => (result.admitted ? result.reports[0].remaining : -1)).sort();
      assert.deepEqual(remaining, [0, 1, 2, 3, 4, 5, 6]);
      const refused = results.find((result) => !result.admitted);
      assert.ok(refused && !refused.admitted);
      assert.equal(refused.limit, 'requests_per_minute');
      assert.equal(refused.holder, 'key');
      // One request drains in every 60/7 s.
      assert.ok(refused.retryAfterMs > 8_000 && refused.retryAfterMs <= 8_572, String(refused.retryAfterMs));
    });

    test('two checks pass or fail together: a refusal by one takes nothing from the other', async () => {
      const key: CounterCheck = { scope: scope(), holder: 'key', requestsPerMinute: 10 };
      const organization: CounterCheck = { scope: scope(), holder: 'organization', requestsPerMinute: 2 };
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await backend.admit({ checks: [key, organization], requests: 1 }));
      assert.deepEqual(
        results.map((result) => (result.admitted ? 'ok' : result.holder)),
        ['ok', 'ok', 'organization', 'organization'],
      );
      const alone = await backend.admit({ checks: [key], requests: 1 });
      assert.ok(alone.admitted);
      assert.equal(alone.reports[0].remaining, 7, 'the key counted only the two admitted');
    });

    test('tokens: an admission reports the level and takes none, settled tokens overfill', async () => {
      const check: CounterCheck = { scope: scope(), holder: 'key', tokensPerMinute: 100 };
      const levelNow = async () => {
        const admission = await backend.admit({ checks: [check], requests: 1 });
        assert.ok(admission.admitted);
        return admission.tokenLevels[0];
      };
      assert.equal(await levelNow(), 0);
      assert.equal(await levelNow(), 0, 'an admission took no tokens');
      await backend.addTokens([check], 150);
      const level = await levelNow();
      // 150 tokens weigh 150 × 60,000 unit·ms, less what drained since (at most 10 tokens: 6 s).
      assert.ok(level <= 150 * 60_000 && level > 140 * 60_000, String(level));
      // The 41 to 51 tokens above 99 must drain at 100 per minute before one more fits.
      const waitMs = waitFor(level, 100, 1);
      assert.ok(waitMs > 24_600 && waitMs <= 30_600, String(waitMs));
      const reported = await backend.admit({ checks: [check], requests: 1 });
      assert.ok(reported.admitted);
      assert.equal(reported.reports[0].limit, 'tokens_per_minute');
      assert.equal(reported.reports[0].remaining, 0);
    });

    test('concurrent slots: taken under leases, refused when full, freed by release', async () => {
      const check: CounterCheck = { scope: scope(), holder: 'key', concurrentRequests: 2 };
      const take = (id: string) => backend.admit({ checks: [check], requests: 1, lease: { id, ttlMs: 60_000 } });
      assert.ok((await take('a')).admitted);
      assert.ok((await take('b')).admitted);
      const refused = await take('c');
      assert.ok(!refused.admitted);
      assert.equal(refused.limit, 'concurrent_requests');
      await backend.release([check.scope], 'a');
      assert.ok((await take('d')).admitted);
    });

    test('a slot moves to another lease (a request to its background job) and is freed by that one', async () => {
      const check: CounterCheck = { scope: scope(), holder: 'key', concurrentRequests: 1 };
      assert.ok((await backend.admit({ checks: [check], requests: 1, lease: { id: 'request', ttlMs: 60_000 } })).admitted);
      await backend.transfer([check.scope], 'request', 'job', 60_000);
      await backend.release([check.scope], 'request');
      assert.ok(!(await backend.admit({ checks: [check], requests: 1, lease: { id: 'next', ttlMs: 60_000 } })).admitted, 'the job holds it');
      await backend.release([check.scope], 'job');
      assert.ok((await backend.admit({ checks: [check], requests: 1, lease: { id: 'next', ttlMs: 60_000 } })).admitted);
      // A lease that is gone moves nowhere.
      await backend.transfer([check.scope], 'gone', 'job_2', 60_000);
      assert.ok(!(await backend.admit({ checks: [check], requests: 1, lease: { id: 'third', ttlMs: 60_000 } })).admitted);
      await backend.release([check.scope], 'next');
      assert.ok((await backend.admit({ checks: [check], requests: 1, lease: { id: 'fourth', ttlMs: 60_000 } })).admitted);
    });

    test('a lease that outlives its ttl frees its slot (an instance died holding it)', async () => {
      const check: CounterCheck = { scope: scope(), holder: 'key', concurrentRequests: 1 };
      assert.ok((await backend.admit({ checks: [check], requests: 1, lease: { id: 'short', ttlMs: 1_000 } })).admitted);
      assert.ok(!(await backend.admit({ checks: [check], requests: 1, lease: { id: 'x', ttlMs: 60_000 } })).admitted);
      await eventually(async () => assert.ok((await backend.admit({ checks: [check], requests: 1, lease: { id: 'y', ttlMs: 60_000 } })).admitted));
    });
  });
}

describe('a background job holds its request’s slot until it ends', () => {
  test('handOver keeps the slot after the response, releaseJob frees it', async () => {
    const limiter = new Limiter(new MemoryBackend(), {
      onBackendFailure: 'open',
      leaseTtlMs: 60_000,
      logger: pino({ level: 'silent' }),
      metrics: new Registry(),
    });
    const auth = {
      key: { id: 'key_jobs', limits: { concurrent_requests: 1 } },
      owner: { kind: 'account', id: 'acct_jobs' },
      organizationLimits: null,
    } as unknown as AuthContext;
    const ticket = await limiter.admit(auth)!;
    await ticket.handOver('resp_1', 60_000);
    ticket.release();
    await assert.rejects(
      async () => limiter.admit(auth),
      (error: GatewayError) => error.code === 'concurrent_requests_exceeded',
    );
    limiter.releaseJob({ id: 'resp_1', keyId: 'key_jobs', owner: { id: 'acct_jobs' } });
    await new Promise((resolve) => setImmediate(resolve));
    const next = await limiter.admit(auth)!;
    next.release();
  });
});

describe('Redis away', () => {
  const auth = {
    key: { id: 'key_away', limits: { requests_per_minute: 1 } },
    owner: { kind: 'account', id: 'acct_away' },
    organizationLimits: null,
  } as unknown as AuthContext;
  const limiterOn = (mode: 'open' | 'closed') => {
    const metrics = new Registry();
    // Nothing listens on port 1: every command fails at once.
    const limiter = new Limiter(new RedisBackend({ url: 'redis://127.0.0.1:1', prefix }), {
      onBackendFailure: mode,
      leaseTtlMs: 60_000,
      logger: pino({ level: 'silent' }),
      metrics,
    });
    return { limiter, metrics };
  };

  test('fail open: the request is admitted, without headers, and the failure counted', async () => {
    const { limiter, metrics } = limiterOn('open');
    try {
      for (let i = 0; i < 3; i++) assert.deepEqual((await limiter.admit(auth))?.headers, []);
      const failures = await metrics.getSingleMetric('gateway_limit_backend_failures_total')?.get();
      assert.equal(failures?.values[0].value, 3);
    } finally {
      await limiter.close();
    }
  });

  test('fail closed: 503 limits_unavailable, retryable', async () => {
    const { limiter } = limiterOn('closed');
    try {
      await assert.rejects(
        async () => limiter.admit(auth),
        (error: unknown) => {
          assert.ok(error instanceof GatewayError);
          assert.equal(error.status, 503);
          assert.equal(error.code, 'limits_unavailable');
          assert.equal(error.retryable, true);
          return true;
        },
      );
    } finally {
      await limiter.close();
    }
  });
});

describe('the token pre-check', () => {
  const limiter = new Limiter(new MemoryBackend(), {
    onBackendFailure: 'open',
    leaseTtlMs: 60_000,
    logger: pino({ level: 'silent' }),
    metrics: new Registry(),
  });
  const check: CounterCheck = { scope: 'key:precheck', holder: 'key', tokensPerMinute: 100 };
  /** An estimate that counts how often the prompt was tokenized. */
  const estimate = (bound: number, tokens: number) => {
    const counted = { bound, reads: 0 };
    return Object.defineProperty(counted, 'tokens', {
      get() {
        counted.reads += 1;
        return tokens;
      },
    }) as typeof counted & { readonly tokens: number };
  };
  // 60 tokens in the bucket: 40 fit.
  const levels = [60 * 60_000];

  test('a bound that fits passes without tokenizing the prompt', () => {
    const fits = estimate(40, 10);
    limiter.checkTokens([check], levels, fits);
    assert.equal(fits.reads, 0);
  });

  test('a bound over what is free: the estimate decides, tokenized once', () => {
    const estimated = estimate(400, 40);
    limiter.checkTokens([check], levels, estimated);
    assert.equal(estimated.reads, 1);
    assert.throws(
      () => limiter.checkTokens([check], levels, estimate(400, 41)),
      (error: GatewayError) => error.code === 'tokens_per_minute_exceeded' && error.status === 429,
    );
  });
});
