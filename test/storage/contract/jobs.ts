import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { timeOrderedId } from '../../../src/core/ids.ts';
import type { JobKind, JobRecord, JobStatus } from '../../../src/storage/store.ts';
import type { ContractContext } from './context.ts';

const NOW = 50_000_000;

function newJob(overrides: { kind?: JobKind; status?: JobStatus; createdAt?: number; expiresAt?: number } = {}) {
  return {
    id: timeOrderedId('resp'),
    kind: overrides.kind ?? 'response',
    owner: { kind: 'account', id: 'acct_jobs' },
    keyId: 'key_jobs',
    status: overrides.status ?? 'queued',
    payload: { model: 'model-a', input: [{ role: 'user', content: 'hi' }], max: 2 ** 40 },
    result: { id: 'resp_1', status: 'queued', output: [] },
    reservationId: 'res_1',
    createdAt: overrides.createdAt ?? NOW,
    expiresAt: overrides.expiresAt ?? NOW + 86_400_000,
  } as const satisfies Omit<JobRecord, 'leaseOwner' | 'leaseUntil' | 'attempts' | 'updatedAt'>;
}

export function jobsContract({ store, peer }: ContractContext): void {
  describe('jobs', () => {
    test('create and get', async () => {
      const job = newJob();
      const created = await store().createJob(job);
      assert.deepEqual(created, { ...job, updatedAt: job.createdAt, leaseOwner: null, leaseUntil: null, attempts: 0 });
      assert.deepEqual(await peer().getJob(job.id), created);
      assert.equal(await store().getJob('resp_missing'), null);
      const bare = { ...newJob(), payload: null, result: null, reservationId: null };
      assert.deepEqual(await store().createJob(bare), { ...bare, updatedAt: bare.createdAt, leaseOwner: null, leaseUntil: null, attempts: 0 });
    });

    test('claims take the oldest queued job of the kind, then lapsed leases', async () => {
      await store().deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      const newer = await store().createJob(newJob({ createdAt: NOW + 10 }));
      const older = await store().createJob(newJob({ createdAt: NOW }));
      const video = await store().createJob(newJob({ kind: 'video', createdAt: NOW - 10 }));
      await store().createJob(newJob({ status: 'completed', createdAt: NOW - 20 }));
      await store().createJob(newJob({ createdAt: NOW - 30, expiresAt: NOW - 1 }));

      const first = await store().claimJob('response', 'worker-a', NOW + 100, NOW + 1_000);
      assert.deepEqual(first, {
        ...older,
        status: 'in_progress',
        leaseOwner: 'worker-a',
        leaseUntil: NOW + 1_000,
        attempts: 1,
        updatedAt: NOW + 100,
      });
      assert.equal((await peer().claimJob('response', 'worker-b', NOW + 100, NOW + 1_000))?.id, newer.id);
      assert.equal(await peer().claimJob('response', 'worker-b', NOW + 100, NOW + 1_000), null, 'leases still held');
      assert.equal((await peer().claimJob('video', 'worker-b', NOW + 100, NOW + 1_000))?.id, video.id);

      const taken = await peer().claimJob('response', 'worker-c', NOW + 1_001, NOW + 2_000);
      assert.equal(taken?.id, older.id, 'a lapsed lease is claimed again, oldest first');
      assert.equal(taken?.attempts, 2);
      assert.equal(taken?.leaseOwner, 'worker-c');
    });

    test('concurrent claimers never take the same job', async () => {
      await store().deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      const jobs = [];
      for (let i = 0; i < 20; i++) jobs.push(await store().createJob(newJob({ createdAt: NOW + i })));
      const claims = await Promise.all(
        Array.from({ length: 50 }, (_, index) => (index % 2 === 0 ? store() : peer()).claimJob('response', `worker-${index}`, NOW + 100, NOW + 10_000)),
      );
      const claimed = claims.filter((job) => job !== null).map((job) => job.id);
      assert.equal(claimed.length, jobs.length);
      assert.deepEqual(new Set(claimed), new Set(jobs.map((job) => job.id)));
    });

    test('transitions are compare-and-set on the status', async () => {
      const job = await store().createJob(newJob());
      const running = await store().transitionJob(job.id, ['queued'], { status: 'in_progress', leaseUntil: NOW + 500, now: NOW + 1 });
      assert.equal(running?.status, 'in_progress');
      assert.equal(running?.leaseUntil, NOW + 500);
      assert.deepEqual(running?.result, job.result, 'a patch without result keeps it');
      assert.equal(running?.updatedAt, NOW + 1);

      const [cancelled, completed] = await Promise.all([
        store().transitionJob(job.id, ['queued', 'in_progress'], { status: 'cancelled', now: NOW + 2 }),
        peer().transitionJob(job.id, ['queued', 'in_progress'], { status: 'completed', result: { done: true }, now: NOW + 2 }),
      ]);
      assert.equal([cancelled, completed].filter((outcome) => outcome !== null).length, 1, 'one side wins the race');
      const winner = (cancelled ?? completed)!;
      assert.equal((await store().getJob(job.id))?.status, winner.status);
      assert.equal(await store().transitionJob(job.id, ['in_progress'], { status: 'failed', now: NOW + 3 }), null);
      assert.equal(await store().transitionJob(job.id, [], { status: 'failed', now: NOW + 3 }), null);
      assert.equal(await store().transitionJob('resp_missing', ['queued'], { status: 'failed', now: NOW + 3 }), null);

      const updated = await store().transitionJob(job.id, [winner.status], {
        result: null,
        payload: { replaced: true },
        leaseUntil: null,
        now: NOW + 4,
      });
      assert.equal(updated?.status, winner.status, 'a patch without status keeps it');
      assert.equal(updated?.result, null);
      assert.deepEqual(updated?.payload, { replaced: true });
      assert.equal(updated?.leaseUntil, null);
      assert.equal(updated?.leaseOwner, null);
    });

    test('expired jobs are deleted', async () => {
      await store().deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      const old = await store().createJob(newJob({ expiresAt: NOW }));
      const fresh = await store().createJob(newJob({ expiresAt: NOW + 2 }));
      assert.equal(await store().deleteExpiredJobs(NOW + 1), 1);
      assert.equal(await store().getJob(old.id), null);
      assert.ok(await store().getJob(fresh.id));
    });
  });
}
