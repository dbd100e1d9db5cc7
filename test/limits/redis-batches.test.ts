/**
 * The Redis counters under bursts, seen on the wire: a TCP proxy in front of Redis counts the
 * script calls and can lose a call's answer. Many requests in one turn make one call and get
 * exactly the limit, over two instances too; a call whose answer is lost fails every request it
 * carried the way `rate_limits.on_backend_failure` says, and counting resumes once Redis answers. A
 * call unanswered fails after the command timeout; one answered while the event loop was held up
 * does not.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { AuthContext } from '../../src/auth/context.ts';
import type { GatewayError } from '../../src/core/errors.ts';
import type { CounterCheck } from '../../src/limits/backend.ts';
import { type BackendFailureMode, Limiter } from '../../src/limits/limiter.ts';
import { RedisBackend } from '../../src/limits/redis-backend.ts';
import { eventually } from '../chat/helpers.ts';
import { deleteRedisKeys, TEST_REDIS_URL, testRedisPrefix } from '../helpers/redis.ts';

const prefix = testRedisPrefix();
after(() => deleteRedisKeys(prefix));

/** Forwards to Redis; counts the script calls clients send; `loseAnswers` drops the connection once a call reached Redis. */
class RedisProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  scriptCalls = 0;
  loseAnswers = false;
  /** Answers are dropped on their way back: Redis looks alive and never answers. */
  withholdAnswers = false;

  constructor() {
    const target = new URL(TEST_REDIS_URL);
    this.#server = createServer((client) => {
      const upstream = createConnection({ host: target.hostname, port: Number(target.port || 6379) });
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => {});
      }
      client.on('data', (chunk: Buffer) => {
        // A command is an array of bulk strings: the script calls are `eval` (the first on a
        // connection, which loads the script) and `evalsha`.
        const calls = chunk.toString('latin1').match(/\r\n(evalsha|eval)\r\n/gi)?.length ?? 0;
        this.scriptCalls += calls;
        upstream.write(chunk);
        if (calls > 0 && this.loseAnswers) {
          // Redis runs the call; its answer never comes back.
          client.destroy();
          upstream.end();
        }
      });
      upstream.on('data', (chunk: Buffer) => {
        if (!this.withholdAnswers) client.write(chunk);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const address = this.#server.address();
    assert.ok(address && typeof address === 'object');
    return `redis://127.0.0.1:${address.port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

let proxy: RedisProxy;
let url: string;
before(async () => {
  proxy = new RedisProxy();
  url = await proxy.listen();
});
after(() => proxy.close());

const backendThroughProxy = async (): Promise<RedisBackend> => {
  const backend = new RedisBackend({ url, prefix });
  // Connected, and the script loaded on the connection, before anything is counted: waited for as
  // events, not tried for a while (a busy machine connects late).
  await backend.connected();
  const warmUp: CounterCheck = { scope: `key:warm_${randomBytes(3).toString('hex')}`, holder: 'key', requestsPerMinute: 1 };
  await backend.admit({ checks: [warmUp], requests: 0 });
  return backend;
};

const limiterOn = (backend: RedisBackend, mode: BackendFailureMode) => {
  const metrics = new Registry();
  const limiter = new Limiter(backend, { onBackendFailure: mode, leaseTtlMs: 60_000, logger: pino({ level: 'silent' }), metrics });
  return { limiter, metrics };
};

const authWith = (limits: object): AuthContext =>
  ({
    key: { id: `key_${randomBytes(4).toString('hex')}`, limits },
    owner: { kind: 'account', id: 'acct_batches' },
    organizationLimits: null,
  }) as unknown as AuthContext;

/** The outcome of each admission: 'ok', or the error code it was refused with. */
function outcomes(admissions: readonly unknown[]): Promise<(string | null)[]> {
  return Promise.all(
    admissions.map((admission) =>
      Promise.resolve(admission).then(
        () => 'ok',
        (error: GatewayError) => error.code,
      ),
    ),
  );
}

describe('Redis counters in batches', () => {
  test('200 requests in one turn: one script call, exactly the limit admitted', async () => {
    const backend = await backendThroughProxy();
    const { limiter } = limiterOn(backend, 'closed');
    try {
      const auth = authWith({ requests_per_minute: 50, concurrent_requests: 120 });
      const before = proxy.scriptCalls;
      const results = await outcomes(Array.from({ length: 200 }, () => limiter.admit(auth)));
      assert.equal(proxy.scriptCalls - before, 1);
      assert.equal(results.filter((result) => result === 'ok').length, 50);
      assert.ok(results.every((result) => result === 'ok' || result === 'requests_per_minute_exceeded'));
    } finally {
      await limiter.close();
    }
  });

  test('two instances bursting in the same turns share the count exactly', async () => {
    const backends = [await backendThroughProxy(), await backendThroughProxy()];
    const limiters = backends.map((backend) => limiterOn(backend, 'closed').limiter);
    try {
      const auth = authWith({ requests_per_minute: 30 });
      const before = proxy.scriptCalls;
      const results = await outcomes(Array.from({ length: 100 }, (_, index) => limiters[index % 2].admit(auth)));
      assert.equal(proxy.scriptCalls - before, 2, 'one call per instance');
      assert.equal(results.filter((result) => result === 'ok').length, 30);
    } finally {
      await Promise.all(limiters.map((limiter) => limiter.close()));
    }
  });

  test('a call Redis does not answer fails its requests after the command timeout (closed: 503)', async () => {
    const backend = await backendThroughProxy();
    const { limiter } = limiterOn(backend, 'closed');
    try {
      proxy.withholdAnswers = true;
      const results = await outcomes(Array.from({ length: 5 }, () => limiter.admit(authWith({ requests_per_minute: 100 }))));
      assert.deepEqual(results, Array(5).fill('limits_unavailable'));
    } finally {
      proxy.withholdAnswers = false;
      await limiter.close();
    }
  });

  test('an answer that came while the event loop was held up past the timeout is read, not taken for a timeout', async () => {
    // Straight to Redis: the proxy runs on this event loop, and would be held up too.
    const backend = new RedisBackend({ url: TEST_REDIS_URL, prefix });
    await backend.connected();
    const { limiter, metrics } = limiterOn(backend, 'closed');
    try {
      const admitted = outcomes([limiter.admit(authWith({ requests_per_minute: 100 }))]);
      // The batch is sent at the end of the turn (script-batch.ts). Then, as in a long collection or
      // on a starved CPU, the loop reads nothing for 1.5 s (three times the command timeout) while
      // Redis answers.
      await new Promise((resolve) => setImmediate(resolve));
      const until = Date.now() + 1_500;
      while (Date.now() < until);
      assert.deepEqual(await admitted, ['ok']);
      const failures = await metrics.getSingleMetric('gateway_limit_backend_failures_total')?.get();
      assert.equal(failures?.values[0]?.value ?? 0, 0);
    } finally {
      await limiter.close();
    }
  });

  for (const mode of ['open', 'closed'] as const) {
    test(`an answer lost mid-batch fails every request of the batch (${mode}); counting resumes`, async () => {
      const backend = await backendThroughProxy();
      const { limiter, metrics } = limiterOn(backend, mode);
      try {
        const auth = authWith({ requests_per_minute: 100 });
        proxy.loseAnswers = true;
        const lost = await Promise.all(
          Array.from({ length: 20 }, () =>
            Promise.resolve(limiter.admit(auth)).then(
              (ticket) => ({ headers: ticket?.headers.length }),
              (error: GatewayError) => ({ status: error.status, code: error.code }),
            ),
          ),
        );
        proxy.loseAnswers = false;
        if (mode === 'open') assert.deepEqual(lost, Array(20).fill({ headers: 0 }), 'admitted, without rate-limit headers');
        else assert.deepEqual(lost, Array(20).fill({ status: 503, code: 'limits_unavailable' }));
        const failures = await metrics.getSingleMetric('gateway_limit_backend_failures_total')?.get();
        assert.equal(failures?.values[0].value, 20);
        // ioredis reconnects by itself (as soon as a busy machine lets it); the next admissions are
        // counted again. The lost call ran in Redis: its requests were counted although the gateway
        // could not know it. Usually it carries all 20; a busy machine may send them as two calls,
        // and only the first reaches Redis before the proxy drops the connection.
        const ticket = await eventually(async () => {
          const admitted = await Promise.resolve(limiter.admit(auth)).catch(() => undefined);
          assert.ok(admitted && admitted.headers.length > 0, 'counted again');
          return admitted;
        }, 60_000);
        const remaining = Number(ticket.headers.find(([name]) => name === 'x-ratelimit-remaining-requests')?.[1]);
        assert.ok(remaining < 100 - 1, `remaining ${remaining}`);
      } finally {
        proxy.loseAnswers = false;
        await limiter.close();
      }
    });
  }
});
