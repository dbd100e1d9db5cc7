import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { timeOrderedId } from '../../../src/core/ids.ts';
import type { JobKind, JobStatus, NewJob, OwnerRef } from '../../../src/storage/store.ts';
import type { ContractContext } from './context.ts';

const NOW = 50_000_000;

function newJob(overrides: { kind?: JobKind; status?: JobStatus; createdAt?: number; expiresAt?: number; owner?: string } = {}) {
  return {
    id: timeOrderedId('resp'),
    kind: overrides.kind ?? 'response',
    owner: { kind: 'account', id: overrides.owner ?? 'acct_jobs' },
    keyId: 'key_jobs',
    status: overrides.status ?? 'queued',
    payload: { model: 'model-a', input: [{ role: 'user', content: 'hi' }], max: 2 ** 40 },
    result: { id: 'resp_1', status: 'queued', output: [] },
    reservationId: 'res_1',
    createdAt: overrides.createdAt ?? NOW,
    expiresAt: overrides.expiresAt ?? NOW + 86_400_000,
  } as const satisfies NewJob;
}

export function jobsContract({ store, peer }: ContractContext): void {
  describe('jobs', () => {
    test('create and get', async () => {
      /** A new job as the store returns it: never claimed, dispatched, charged or checkpointed. */
      const asCreated = (job: NewJob) => ({
        ...job,
        updatedAt: job.createdAt,
        leaseOwner: null,
        leaseUntil: null,
        attempts: 0,
        dispatchedAt: null,
        cost: null,
        checkpoint: null,
        nextAttemptAt: null,
      });
      const job = newJob();
      const created = await store().createJob(job);
      assert.deepEqual(created, asCreated(job));
      assert.deepEqual(await peer().getJob(job.id), created);
      assert.equal(await store().getJob('resp_missing'), null);
      const bare = { ...newJob(), payload: null, result: null, reservationId: null };
      assert.deepEqual(await store().createJob(bare), asCreated(bare));
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

    test('claims go to the owner with the fewest jobs under a live lease, on any instance, then the oldest', async () => {
      await store().deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      const backlog = [];
      for (let i = 0; i < 6; i++) backlog.push(await store().createJob(newJob({ owner: 'acct_busy', createdAt: NOW + i })));
      const other = await store().createJob(newJob({ owner: 'acct_quiet', createdAt: NOW + 100 }));
      const claim = (at: number, via = store()) => via.claimJob('response', 'worker-a', at, at + 1_000);
      assert.equal((await claim(NOW + 200))?.id, backlog[0].id, 'no one runs anything: the oldest first');
      assert.equal((await claim(NOW + 200, peer()))?.id, other.id, "the busy owner runs one (claimed by another instance): the other's job next");
      assert.equal((await claim(NOW + 200))?.id, backlog[1].id);
      const later = await store().createJob(newJob({ owner: 'acct_quiet', createdAt: NOW + 300 }));
      assert.equal((await claim(NOW + 201, peer()))?.id, later.id, 'two running against one: the quiet owner again, ahead of the older backlog');
      assert.equal((await claim(NOW + 2_000))?.id, backlog[0].id, 'lapsed leases count for no one: the oldest claimable first');
      assert.equal((await store().getJob(backlog[0].id))?.attempts, 2);
    });

    test('with one slot, owners take turns: each claim goes to the owner served longest ago', async () => {
      await store().deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      const jobs = [];
      for (let i = 0; i < 3; i++) jobs.push(await store().createJob(newJob({ owner: 'acct_turn_a', createdAt: NOW + i })));
      for (let i = 0; i < 2; i++) jobs.push(await store().createJob(newJob({ owner: 'acct_turn_b', createdAt: NOW + 10 + i })));
      const order: string[] = [];
      for (let turn = 0; turn < 5; turn++) {
        const at = NOW + 100 + turn;
        const claimed = await (turn % 2 === 0 ? store() : peer()).claimJob('response', 'worker-a', at, at + 1_000);
        assert.ok(claimed);
        order.push(claimed.owner.id);
        await store().transitionJob(claimed.id, ['in_progress'], { status: 'completed', leaseUntil: null, now: at }, 'worker-a');
      }
      assert.deepEqual(order, ['acct_turn_a', 'acct_turn_b', 'acct_turn_a', 'acct_turn_b', 'acct_turn_a']);
    });

    test("an owner's turn goes with its last job: deleting expired jobs forgets the turns of owners left without one", async () => {
      await store().deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      const kept = await store().createJob(newJob({ owner: 'acct_turn_kept', createdAt: NOW }));
      const gone = await store().createJob(newJob({ owner: 'acct_turn_gone', createdAt: NOW, expiresAt: NOW + 500 }));
      // The kept owner was served first, the other last: the kept one's turn comes next while the other's is remembered.
      assert.equal((await store().claimJob('response', 'worker-a', NOW + 100, NOW + 200))?.id, kept.id);
      assert.equal((await store().claimJob('response', 'worker-a', NOW + 101, NOW + 200))?.id, gone.id);
      await store().transitionJob(kept.id, ['in_progress'], { status: 'completed', leaseUntil: null, now: NOW + 102 }, 'worker-a');

      assert.equal(await peer().deleteExpiredJobs(NOW + 1_000), 1);
      const keptNext = await store().createJob(newJob({ owner: 'acct_turn_kept', createdAt: NOW + 300 }));
      const goneNext = await store().createJob(newJob({ owner: 'acct_turn_gone', createdAt: NOW + 400 }));
      // Its turn forgotten, the owner whose jobs all expired counts as never served, ahead of the older job.
      assert.equal((await store().claimJob('response', 'worker-a', NOW + 2_000, NOW + 3_000))?.id, goneNext.id);
      assert.equal((await store().claimJob('response', 'worker-a', NOW + 2_001, NOW + 3_000))?.id, keptNext.id);
    });

    test('a parked job is claimed once it is due, without counting an attempt, and keeps its checkpoint', async () => {
      await store().deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      const job = await store().createJob(newJob({ kind: 'video' }));
      await store().claimJob('video', 'worker-a', NOW + 1, NOW + 1_000);
      const parked = await store().transitionJob(
        job.id,
        ['in_progress'],
        { leaseUntil: null, nextAttemptAt: NOW + 500, checkpoint: { operation: 'op_1' }, now: NOW + 2 },
        'worker-a',
      );
      assert.equal(parked?.status, 'in_progress');
      assert.equal(parked?.leaseOwner, null);
      assert.equal(parked?.nextAttemptAt, NOW + 500);
      assert.equal(await peer().claimJob('video', 'worker-b', NOW + 499, NOW + 2_000), null, 'not due yet');
      assert.equal(await peer().releaseLeasesHeldElsewhere('worker-b', NOW + 10), 0, 'a parked job holds no lease to release');
      const due = await peer().claimJob('video', 'worker-b', NOW + 500, NOW + 2_000);
      assert.equal(due?.id, job.id);
      assert.equal(due?.attempts, 1, 'a due step is not a takeover');
      assert.equal(due?.nextAttemptAt, null);
      assert.equal(due?.leaseOwner, 'worker-b');
      assert.deepEqual(due?.checkpoint, { operation: 'op_1' });
      assert.equal(await store().claimJob('video', 'worker-c', NOW + 1_999, NOW + 3_000), null, 'the step holds its lease');
      const taken = await store().claimJob('video', 'worker-c', NOW + 2_001, NOW + 3_000);
      assert.equal(taken?.attempts, 2, 'a step whose lease lapsed is taken over');
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

    test('a transition may require the lease holder, and records dispatch and cost once', async () => {
      await store().deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      const job = await store().createJob(newJob());
      const claimed = await store().claimJob('response', 'worker-a', NOW + 1, NOW + 1_000);
      assert.equal(claimed?.id, job.id);
      assert.equal(await peer().transitionJob(job.id, ['in_progress'], { dispatchedAt: NOW + 2, now: NOW + 2 }, 'worker-b'), null, 'not the holder');
      const dispatched = await peer().transitionJob(job.id, ['in_progress'], { dispatchedAt: NOW + 2, now: NOW + 2 }, 'worker-a');
      assert.equal(dispatched?.dispatchedAt, NOW + 2);
      const again = await store().transitionJob(job.id, ['in_progress'], { dispatchedAt: NOW + 9, now: NOW + 3 }, 'worker-a');
      assert.equal(again?.dispatchedAt, NOW + 2, 'the first dispatch is kept');
      const big = 2n ** 62n + 7n;
      const ended = await store().transitionJob(job.id, ['in_progress'], { status: 'completed', cost: big, now: NOW + 4 }, 'worker-a');
      assert.equal(ended?.status, 'completed');
      assert.equal(ended?.cost, big, 'costs beyond 2^53 are exact');
      assert.equal((await peer().getJob(job.id))?.cost, big);
    });

    test("a worker's checkpoint is kept with the job, replaced by the next, and read by a peer", async () => {
      await store().deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      const job = await store().createJob(newJob({ kind: 'video' }));
      await store().claimJob('video', 'worker-a', NOW + 1, NOW + 1_000);
      const operation = { routeKey: 'veo:veo-3', operation: { id: 'models/veo-3/operations/op\u0000é', polls: [1, 2] } };
      const checkpointed = await store().transitionJob(job.id, ['in_progress'], { checkpoint: operation, now: NOW + 2 }, 'worker-a');
      assert.deepEqual(checkpointed?.checkpoint, operation);
      assert.deepEqual((await peer().getJob(job.id))?.checkpoint, operation);
      const untouched = await store().transitionJob(job.id, ['in_progress'], { now: NOW + 3 }, 'worker-a');
      assert.deepEqual(untouched?.checkpoint, operation, 'a patch without a checkpoint keeps it');
      assert.equal(await peer().transitionJob(job.id, ['in_progress'], { checkpoint: { other: true }, now: NOW + 4 }, 'worker-b'), null, 'not the holder');
      const replaced = await store().transitionJob(job.id, ['in_progress'], { checkpoint: { next: 1 }, now: NOW + 5 }, 'worker-a');
      assert.deepEqual(replaced?.checkpoint, { next: 1 });
    });

    test('leases are renewed only for the jobs the worker still holds', async () => {
      await store().deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      const kept = await store().createJob(newJob({ createdAt: NOW }));
      const cancelled = await store().createJob(newJob({ createdAt: NOW + 1 }));
      const other = await store().createJob(newJob({ createdAt: NOW + 2 }));
      await store().claimJob('response', 'worker-a', NOW + 5, NOW + 1_000);
      await store().claimJob('response', 'worker-a', NOW + 5, NOW + 1_000);
      await store().claimJob('response', 'worker-b', NOW + 5, NOW + 1_000);
      await peer().transitionJob(cancelled.id, ['queued', 'in_progress'], { status: 'cancelled', leaseUntil: null, now: NOW + 6 });
      const held = await peer().renewLeases([kept.id, cancelled.id, other.id, 'resp_missing'], 'worker-a', NOW + 7, NOW + 5_000);
      assert.deepEqual(held, [kept.id]);
      assert.equal((await store().getJob(kept.id))?.leaseUntil, NOW + 5_000);
      assert.equal((await store().getJob(other.id))?.leaseUntil, NOW + 1_000, "another worker's lease is untouched");
      assert.deepEqual(await store().renewLeases([], 'worker-a', NOW + 7, NOW + 5_000), []);

      assert.equal(await store().releaseLeasesHeldElsewhere('worker-a', NOW + 8), 1);
      const released = await store().getJob(other.id);
      assert.equal(released?.leaseOwner, null);
      assert.equal(released?.leaseUntil, null);
      assert.equal((await store().getJob(kept.id))?.leaseOwner, 'worker-a');
      assert.equal((await peer().claimJob('response', 'worker-c', NOW + 9, NOW + 1_000))?.id, other.id, 'a released lease is claimable at once');
    });

    test('ended jobs still holding credit are found through their open holds', async () => {
      await store().deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      const owner: OwnerRef = { kind: 'account', id: (await store().createAccount({ name: 'job holds' })).id };
      await store().addCredit(owner, 1_000_000n);
      const hold = async (jobId: string) =>
        (await store().reserve({ owner, amount: 10n, requestId: null, expiresAt: NOW + 86_400_000, holder: { kind: 'job', id: jobId } }))!;
      const jobWithHold = async (status: JobStatus, updatedAt: number) => {
        const id = newJob().id;
        const reservation = await hold(id);
        assert.deepEqual(reservation.holder, { kind: 'job', id });
        await store().createJob({ ...newJob(), id, owner, reservationId: reservation.id });
        await store().transitionJob(id, ['queued'], { status, now: updatedAt });
        return { id, reservation };
      };
      const completed = await jobWithHold('completed', NOW + 1);
      const failed = await jobWithHold('failed', NOW + 2);
      await jobWithHold('in_progress', NOW + 3);
      await jobWithHold('cancelled', NOW + 50);
      const settled = await jobWithHold('incomplete', NOW + 4);
      assert.ok(await store().settle(settled.reservation.id, 5n));

      const found = await peer().endedJobsHoldingCredit(NOW + 10, 10);
      assert.deepEqual(
        found.map((job) => job.id),
        [completed.id, failed.id],
        'ended before the bound, hold open, oldest first',
      );
      assert.equal((await peer().endedJobsHoldingCredit(NOW + 10, 1)).length, 1);
      assert.deepEqual((await peer().getReservation(completed.reservation.id))?.holder, { kind: 'job', id: completed.id });
    });

    test('the waiting jobs are counted by kind: queued (the backlog) and parked', async () => {
      await store().deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      await store().createJob(newJob());
      await store().createJob(newJob());
      await store().createJob(newJob({ kind: 'video' }));
      await store().createJob(newJob({ status: 'in_progress' }));
      await store().createJob(newJob({ expiresAt: NOW - 1 }));
      const parked = await store().createJob(newJob({ kind: 'video', status: 'in_progress' }));
      await store().transitionJob(parked.id, ['in_progress'], { leaseUntil: null, nextAttemptAt: NOW + 1_000, now: NOW });
      assert.deepEqual(
        await peer().countWaitingJobs(NOW),
        new Map([
          ['response', { queued: 2, parked: 0 }],
          ['video', { queued: 1, parked: 1 }],
        ]),
      );
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
