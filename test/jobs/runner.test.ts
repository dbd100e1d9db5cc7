/**
 * The runner's scheduling (src/jobs/runner.ts; docs/jobs.md, "Scheduling") over both stores, with
 * handlers defined in this test: kinds that share slots take turns at one slot; an operation's steps
 * park it and give their slot back, so hundreds of operations in flight leave the calls' slots
 * free; one owner's backlog does not hold back another owner's job; a parked step is not claimed
 * before it is due; a lease renewal answered late does not abort the next step of a job that parked
 * meanwhile; a step that leaves without its call's row (parked, or handed back by a stopping
 * instance) ends its call's span.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { timeOrderedId } from '../../src/core/ids.ts';
import type { JobContext, JobHandler, JobSchedule } from '../../src/jobs/handler.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { JOB_LIFETIME_MS } from '../../src/jobs/settings.ts';
import { openStore } from '../../src/storage/open-store.ts';
import type { JobKind, JobRecord, NewJob, Store } from '../../src/storage/store.ts';
import type { CallTrace, HandBackReason } from '../../src/telemetry/tracing.ts';
import { dropSchemas, newSchemaName, TEST_DATABASE_URL } from '../helpers/postgres.ts';

const silent = pino({ level: 'silent' });

function newJob(kind: JobKind, owner: string): NewJob {
  const now = Date.now();
  return {
    id: timeOrderedId('job'),
    kind,
    owner: { kind: 'account', id: owner },
    keyId: 'key_runner',
    status: 'queued',
    payload: null,
    result: null,
    reservationId: null,
    createdAt: now,
    expiresAt: now + JOB_LIFETIME_MS,
  };
}

/** A handler of this test: `run` does the step; the failed and cancelled objects are never looked at here. */
function handler(kind: JobKind, schedule: JobSchedule, run: (job: JobRecord, context: JobContext) => Promise<void>): JobHandler {
  return { kind, schedule, run, failed: () => ({}), cancelled: () => ({}), recordEnd: () => {} };
}

function runnerOn(store: Store, slots: { concurrency: number; operationSteps: number }, handlers: readonly JobHandler[]): JobRunner {
  const runner = new JobRunner({
    store,
    settings: { ...slots, leaseMs: 30_000, pollIntervalMs: 20, heartbeatMs: 250, lifetimeMs: JOB_LIFETIME_MS },
    logger: silent,
    metrics: new Registry(),
    now: Date.now,
  });
  for (const each of handlers) runner.register(each);
  return runner;
}

/** Resolves once `count` jobs have finished on the runner (ended, not parked). */
function finished(runner: JobRunner, count: number, which: (job: JobRecord) => boolean = () => true): Promise<void> {
  let seen = 0;
  return new Promise((resolve) => {
    runner.onJobFinished((job) => {
      if (which(job) && ++seen === count) resolve();
    });
  });
}

const ends = (context: JobContext) => context.end('completed', {}).then(() => undefined);

const schemas: string[] = [];
after(() => dropSchemas(schemas));

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`job scheduling (${engine})`, () => {
    let store: Store;
    let dataDir: string;
    before(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'gateway-runner-'));
      if (engine === 'sqlite') store = await openStore({ dataDir });
      else {
        const schema = newSchemaName('test_runner');
        schemas.push(schema);
        store = await openStore({ databaseUrl: TEST_DATABASE_URL, dataDir, schema, poolSize: 4 });
      }
    });
    after(async () => {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    });

    test('kinds sharing the slots take turns at one slot: neither starves the other', async () => {
      await store.deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      const order: JobKind[] = [];
      const run = (job: JobRecord, context: JobContext) => {
        order.push(job.kind);
        return ends(context);
      };
      const runner = runnerOn(store, { concurrency: 1, operationSteps: 1 }, [handler('response', 'call', run), handler('video', 'call', run)]);
      // The responses are older: strictly oldest-first would run all four before any video.
      for (let i = 0; i < 4; i++) await store.createJob(newJob('response', 'acct_kinds'));
      for (let i = 0; i < 4; i++) await store.createJob(newJob('video', 'acct_kinds'));
      const done = finished(runner, 8);
      runner.start();
      await done;
      await runner.stop(0);
      assert.deepEqual(order, ['response', 'video', 'response', 'video', 'response', 'video', 'response', 'video']);
    });

    test('200 operations in flight park between steps: their 2 step slots never fill the one call slot, and calls are served', async () => {
      await store.deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      let steps = 0;
      let stepping = 0;
      let mostStepping = 0;
      let allParked: () => void;
      const parked = new Promise<void>((resolve) => {
        allParked = resolve;
      });
      // Each operation is started and parked for a minute: none ends during the test.
      const operation = handler('video', 'operation', async (_job, context) => {
        stepping += 1;
        mostStepping = Math.max(mostStepping, stepping);
        assert.ok(await context.park(Date.now() + 60_000, { started: true }));
        stepping -= 1;
        if (++steps === 200) allParked();
      });
      const call = handler('response', 'call', (_job, context) => ends(context));
      const runner = runnerOn(store, { concurrency: 1, operationSteps: 2 }, [operation, call]);
      for (let i = 0; i < 200; i++) await store.createJob(newJob('video', 'acct_videos'));
      for (let i = 0; i < 5; i++) await store.createJob(newJob('response', 'acct_calls'));
      const responses = finished(runner, 5, (job) => job.kind === 'response');
      runner.start();
      await Promise.all([responses, parked]);
      await runner.stop(0);
      assert.ok(mostStepping <= 2, `at most 2 steps at once (${mostStepping})`);
      assert.deepEqual((await store.countWaitingJobs(Date.now())).get('video'), { queued: 0, parked: 200 });
    });

    test("one owner's backlog does not hold back another owner's job: next in line at one slot", async () => {
      await store.deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      const order: string[] = [];
      const call = handler('response', 'call', (job, context) => {
        order.push(job.owner.id);
        return ends(context);
      });
      const runner = runnerOn(store, { concurrency: 1, operationSteps: 1 }, [call]);
      for (let i = 0; i < 20; i++) await store.createJob(newJob('response', 'acct_backlog'));
      await store.createJob(newJob('response', 'acct_other'));
      const done = finished(runner, 21);
      runner.start();
      await done;
      await runner.stop(0);
      assert.equal(order.indexOf('acct_other'), 1, 'right after the job that was first in line');
    });

    test('a parked step is claimed once it is due, not before', async () => {
      await store.deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      let dueAt = 0;
      let lookedAt = 0;
      const operation = handler('video', 'operation', async (job, context) => {
        if (job.checkpoint === null) {
          dueAt = Date.now() + 300;
          await context.park(dueAt, { looks: 1 });
          return;
        }
        lookedAt = Date.now();
        await ends(context);
      });
      const runner = runnerOn(store, { concurrency: 1, operationSteps: 1 }, [operation]);
      await store.createJob(newJob('video', 'acct_due'));
      const done = finished(runner, 1);
      runner.start();
      await done;
      await runner.stop(0);
      assert.ok(lookedAt >= dueAt, 'the second step ran at or after its due time');
    });

    test("a lease renewal answered after its job's step parked does not abort the job's next step, claimed meanwhile", async () => {
      await store.deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      const job = await store.createJob(newJob('video', 'acct_renewal'));
      // The renewal that names the job waits for the step to park before it reaches the store (which
      // then no longer counts the job as this worker's), and answers only once the next step runs.
      const renewalAsked = Promise.withResolvers<void>();
      const parked = Promise.withResolvers<void>();
      const nextStepRuns = Promise.withResolvers<void>();
      const renewalAnswered = Promise.withResolvers<void>();
      let held = false;
      const slowRenewal = new Proxy(store, {
        get(target, property) {
          if (property !== 'renewLeases') {
            const value: unknown = Reflect.get(target, property);
            return typeof value === 'function' ? value.bind(target) : value;
          }
          return async (...args: Parameters<Store['renewLeases']>) => {
            if (held || !args[0].includes(job.id)) return target.renewLeases(...args);
            held = true;
            renewalAsked.resolve();
            await parked.promise;
            const kept = await target.renewLeases(...args);
            await nextStepRuns.promise;
            renewalAnswered.resolve();
            return kept;
          };
        },
      });
      let nextStepAborted: boolean | undefined;
      const operation = handler('video', 'operation', async (_job, context) => {
        if (_job.checkpoint === null) {
          await renewalAsked.promise;
          await context.park(Date.now(), { looks: 1 });
          parked.resolve();
          return;
        }
        nextStepRuns.resolve();
        await renewalAnswered.promise;
        // The runner reads the renewal's answer in the microtasks of the same turn: all run before an immediate.
        await new Promise(setImmediate);
        nextStepAborted = context.signal.aborted;
        await ends(context);
      });
      const runner = runnerOn(slowRenewal, { concurrency: 1, operationSteps: 1 }, [operation]);
      const done = finished(runner, 1);
      runner.start();
      await done;
      await runner.stop(0);
      assert.equal(nextStepAborted, false, 'the next step ran to its end under its own lease');
      assert.equal((await store.getJob(job.id))?.status, 'completed');
    });

    test("a run that leaves without its call's row ends the call's span as handed back: parked, then stopping; the job is not finished", async () => {
      await store.deleteExpiredJobs(Number.MAX_SAFE_INTEGER);
      const reasons: HandBackReason[] = [];
      const span = (): CallTrace => ({
        traceparent: undefined,
        prepared: () => {},
        expectRecord: () => {},
        attempt: () => assert.fail('no attempt here'),
        recorded: () => assert.fail('no row here'),
        handedBack: (reason) => reasons.push(reason),
      });
      let looking: () => void = () => {};
      const lookStarted = new Promise<void>((resolve) => {
        looking = resolve;
      });
      const operation = handler('test-operation', 'operation', async (job, context) => {
        context.traced(span());
        if (job.checkpoint === null) {
          await context.park(Date.now(), { looks: 1 });
          return;
        }
        // A look still under way when the instance stops: it is handed back.
        looking();
        await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
      });
      const runner = runnerOn(store, { concurrency: 1, operationSteps: 1 }, [operation]);
      // A finished job gives back its slot of the key's limits and is announced: not one handed back.
      const finishedJobs: string[] = [];
      runner.onJobFinished((finishedJob) => finishedJobs.push(finishedJob.id));
      const job = await store.createJob(newJob('test-operation', 'acct_traced'));
      runner.start();
      await lookStarted;
      await runner.stop(1_000);
      assert.deepEqual(reasons, ['parked', 'stopping']);
      assert.deepEqual(finishedJobs, []);
      const handedBack = await store.getJob(job.id);
      assert.equal(handedBack?.status, 'in_progress');
      assert.equal(handedBack?.leaseUntil, null);
    });
  });
}
