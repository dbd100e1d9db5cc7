/**
 * The count of PostgreSQL round trips (src/storage/round-trips.ts) that /metrics reports and the
 * benchmark divides by requests: every statement is one, whoever sends it. A file of its own: the
 * count is the process's, and nothing else here talks to PostgreSQL meanwhile.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { Registry } from 'prom-client';
import { silentLogger } from '../../src/core/logger.ts';
import { installMetrics } from '../../src/server/metrics.ts';
import { openPostgresDatabase } from '../../src/storage/postgres/database.ts';
import { databaseRoundTrips } from '../../src/storage/round-trips.ts';
import { timeOrderedId } from '../../src/core/ids.ts';
import { openStore } from '../../src/storage/open-store.ts';
import { jobEvent } from '../../src/webhooks/events.ts';
import { freshDatabase, TEST_DATABASE_URL } from '../helpers/postgres.ts';
import { metricValue } from '../helpers/metrics.ts';

test('every statement sent to PostgreSQL counts one round trip, and /metrics reports the count', async () => {
  const database = openPostgresDatabase({ connectionString: TEST_DATABASE_URL, schema: null, poolSize: 1, logger: silentLogger });
  const app = Fastify();
  const registry = new Registry();
  installMetrics(app, registry);
  try {
    const counted = async (work: () => Promise<unknown>) => {
      const before = databaseRoundTrips.count;
      await work();
      return databaseRoundTrips.count - before;
    };
    assert.equal(await counted(() => database.query({ name: 'test_round_trip', text: 'SELECT $1::int AS one' }, [1])), 1);
    // Prepared once per connection: the second use is one round trip too.
    assert.equal(await counted(() => database.query({ name: 'test_round_trip', text: 'SELECT $1::int AS one' }, [2])), 1);
    assert.equal(await counted(() => database.pool.query('SELECT 1')), 1);
    // BEGIN, the two statements of the work, COMMIT.
    assert.equal(
      await counted(() =>
        database.transaction(async (client) => {
          await client.query('SELECT 1');
          await client.query({ name: 'test_round_trip', text: 'SELECT $1::int AS one', values: [3] });
        }),
      ),
      4,
    );
    // A failed statement was sent all the same; the rollback is one more.
    assert.equal(
      await counted(() =>
        database
          .transaction(async (client) => {
            await client.query('SELECT 1 / 0');
          })
          .catch(() => undefined),
      ),
      3,
    );
    assert.equal(metricValue(await registry.metrics(), 'gateway_database_round_trips_total'), databaseRoundTrips.count);
  } finally {
    await database.close();
    await app.close();
  }
});

test('announcing an ended job to its webhook endpoints is one round trip, and so is an idle look for a job', async () => {
  const database = await freshDatabase();
  const store = await openStore({ dataDir: '', databaseUrl: database.url, logger: silentLogger });
  try {
    const owner = { kind: 'account', id: 'acct_announced' } as const;
    await store.createWebhookEndpoint({ owner, url: 'https://hooks.example.com/a', secret: 'whsec_round_trips_0123456789abcdef', eventTypes: null });
    const id = timeOrderedId('resp');
    const now = Date.now();
    const job = { id, kind: 'response', owner, keyId: 'key_announced', payload: null, reservationId: null, createdAt: now, expiresAt: now + 60_000 } as const;
    await store.createJob({ ...job, status: 'queued', result: { id, object: 'response', status: 'queued' } });
    const ended = await store.transitionJob(id, ['queued'], { status: 'completed', result: { id, object: 'response', status: 'completed' }, now: now + 1 });
    const before = databaseRoundTrips.count;
    assert.equal(await store.announceJob({ jobId: id, event: jobEvent(ended!), now: now + 2 }), 1);
    assert.equal(databaseRoundTrips.count - before, 1);
    assert.deepEqual(await store.unannouncedJobs(10), []);
    // With no job queued, a worker's look for one is one round trip too.
    const idle = databaseRoundTrips.count;
    assert.equal(await store.claimJob('response', 'worker_idle', now + 3, now + 30_000), null);
    assert.equal(databaseRoundTrips.count - idle, 1);
  } finally {
    await store.close();
    await database.drop();
  }
});
