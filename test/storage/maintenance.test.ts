import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BlobStore } from '../../src/storage/blobs.ts';
import { BLOB_SWEEP_BATCH, BLOB_SWEEP_MAX_BATCHES, runMaintenance, startMaintenance, sweepBlobs } from '../../src/storage/maintenance.ts';
import { openStore } from '../../src/storage/open-store.ts';
import { WEBHOOK_DELIVERY_LIFETIME_MS } from '../../src/storage/rows.ts';

function recordingLogger() {
  const entries: { level: string; details: object; message: string }[] = [];
  const log = (level: string) => (details: object, message: string) => void entries.push({ level, details, message });
  return { entries, logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') } };
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 5) {
    if (waited > 5_000) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test('maintenance releases expired reservations and deletes expired rows on its interval', async () => {
  const store = await openStore({ dataDir: '', sqliteFile: ':memory:' });
  const { entries, logger } = recordingLogger();
  let clock = 1_000;
  try {
    const account = await store.createAccount({ name: 'maintained' });
    const owner = { kind: 'account', id: account.id } as const;
    await store.addCredit(owner, 100n);
    const reservation = (await store.reserve({ owner, amount: 60n, requestId: null, expiresAt: 2_000 }))!;
    await store.beginIdempotent({
      keyId: 'key_1',
      route: 'chat',
      idempotencyKey: 'k',
      bodyHash: 'h',
      now: 1_000,
      lockedUntil: 1_500,
      expiresAt: 2_000,
    });
    await store.createJob({
      id: 'video_1',
      kind: 'video',
      owner,
      keyId: 'key_1',
      status: 'queued',
      payload: null,
      result: null,
      reservationId: null,
      createdAt: 1_000,
      expiresAt: 2_000,
    });
    // A delivery expires WEBHOOK_DELIVERY_LIFETIME_MS after its event: this one at 2_000, like the rest.
    await store.createJob({
      id: 'resp_1',
      kind: 'response',
      owner,
      keyId: 'key_1',
      status: 'completed',
      payload: null,
      result: null,
      reservationId: null,
      createdAt: 1_000,
      expiresAt: 2_000,
    });
    await store.createWebhookEndpoint({ owner, url: 'https://hooks.example.com/', secret: 'whsec_c2VjcmV0', eventTypes: null });
    const event = { id: 'evt_1', type: 'response.completed', body: '{}', createdAt: 2_000 - WEBHOOK_DELIVERY_LIFETIME_MS };
    assert.equal(await store.announceJob({ jobId: 'resp_1', event, now: 1_000 }), 1);
    await store.recordRequests([
      {
        id: 'req_1',
        owner,
        keyId: 'key_1',
        route: 'chat',
        model: 'm',
        provider: 'p',
        upstreamModel: 'u',
        status: 'completed',
        httpStatus: 200,
        stream: false,
        inputTokens: 1,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        cacheWrite1hTokens: null,
        outputTokens: 1,
        reasoningTokens: 0,
        searchUnits: 0,
        cost: 1n,
        overHold: 0n,
        errorCode: null,
        createdAt: 1_000,
        durationMs: 1,
        firstByteMs: null,
        output: null,
        canonicalRequest: null,
        blobKeys: [],
        expiresAt: 2_000,
        providerUsage: null,
        attempts: [],
        images: 0,
        videoSeconds: 0,
        cacheSavings: 0n,
      },
    ]);

    const maintenance = startMaintenance(store, { intervalMs: 5, now: () => clock, logger });
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal((await store.getReservation(reservation.id))?.status, 'open', 'nothing expires before its time');

    clock = 3_000;
    await waitFor(() => entries.filter((entry) => entry.level === 'info').length >= 5);
    await maintenance.stop();
    assert.equal((await store.getReservation(reservation.id))?.status, 'released');
    assert.deepEqual(await store.getBalance(owner), { balance: 100n, reserved: 0n, available: 100n });
    assert.equal(await store.getJob('video_1'), null);
    assert.deepEqual(await store.listWebhookDeliveries({ jobId: 'resp_1' }), []);
    assert.equal(await store.getRequest('req_1'), null);
    assert.deepEqual(
      await store.beginIdempotent({
        keyId: 'key_1',
        route: 'chat',
        idempotencyKey: 'k',
        bodyHash: 'other',
        now: 3_000,
        lockedUntil: 4_000,
        expiresAt: 5_000,
      }),
      { state: 'started' },
    );
    assert.deepEqual(
      entries.map((entry) => entry.details),
      [
        { step: 'release expired reservations', count: 1 },
        { step: 'delete expired request log rows', count: 1 },
        { step: 'delete expired idempotency records', count: 1 },
        { step: 'delete expired jobs', count: 2 },
        { step: 'delete expired webhook deliveries', count: 1 },
      ],
    );
  } finally {
    await store.close();
  }
});

test('a failing step is logged and the others still run; stop clears the timer', async () => {
  const { entries, logger } = recordingLogger();
  const calls: string[] = [];
  const failing = {
    async releaseExpired() {
      calls.push('release');
      throw new Error('database is down');
    },
    async deleteExpiredRequests() {
      calls.push('requests');
      return 0;
    },
    async deleteExpiredIdempotency() {
      calls.push('idempotency');
      return 0;
    },
    async deleteExpiredJobs() {
      calls.push('jobs');
      return 0;
    },
    async deleteExpiredWebhookDeliveries() {
      calls.push('webhook deliveries');
      return 0;
    },
    async deleteExpiredSessions() {
      calls.push('sessions');
      return 0;
    },
  };
  await runMaintenance(failing, 0, logger);
  assert.deepEqual(calls, ['release', 'requests', 'idempotency', 'jobs', 'webhook deliveries', 'sessions']);
  assert.equal(entries.length, 1);
  assert.equal(entries[0].level, 'error');
  assert.equal((entries[0].details as { step: string }).step, 'release expired reservations');

  const maintenance = startMaintenance(failing, { intervalMs: 5, now: () => 0, logger });
  await waitFor(() => calls.length >= 10);
  await maintenance.stop();
  const after = calls.length;
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(calls.length, after, 'no pass runs after stop');
});

test('expired output files are swept in batches, a bounded number per pass, after the rows; a failing sweep is logged alone', async () => {
  const store = await openStore({ dataDir: '', sqliteFile: ':memory:' });
  try {
    const sweeps: { createdBefore: number; limit: number }[] = [];
    let left = 2 * BLOB_SWEEP_BATCH + 30;
    const blobs = {
      async sweep(createdBefore: number, limit: number) {
        sweeps.push({ createdBefore, limit });
        const count = Math.min(left, limit);
        left -= count;
        return count;
      },
    } as unknown as BlobStore;
    const { entries, logger } = recordingLogger();
    await runMaintenance(store, 100_000, logger, { store: blobs, lifetimeMs: 60_000 });
    // Files written before now − lifetime go, a batch at a time, until a batch comes back short.
    assert.deepEqual(sweeps, [
      { createdBefore: 40_000, limit: BLOB_SWEEP_BATCH },
      { createdBefore: 40_000, limit: BLOB_SWEEP_BATCH },
      { createdBefore: 40_000, limit: BLOB_SWEEP_BATCH },
    ]);
    assert.deepEqual(
      entries.map((entry) => entry.details),
      [{ step: 'delete expired output files', count: 2 * BLOB_SWEEP_BATCH + 30 }],
    );

    // A backlog larger than one pass takes: the pass stops after its batches, the next one goes on.
    left = Number.MAX_SAFE_INTEGER;
    sweeps.length = 0;
    assert.equal(await sweepBlobs({ store: blobs, lifetimeMs: 0 }, 1), BLOB_SWEEP_MAX_BATCHES * BLOB_SWEEP_BATCH);
    assert.equal(sweeps.length, BLOB_SWEEP_MAX_BATCHES);

    const broken = {
      async sweep() {
        throw new Error('disk gone');
      },
    } as unknown as BlobStore;
    const failing = recordingLogger();
    await runMaintenance(store, 100_000, failing.logger, { store: broken, lifetimeMs: 60_000 });
    assert.deepEqual(
      failing.entries.map((entry) => [entry.level, (entry.details as { step: string }).step]),
      [['error', 'delete expired output files']],
    );
  } finally {
    await store.close();
  }
});
