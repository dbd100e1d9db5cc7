import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { timeOrderedId } from '../../../src/core/ids.ts';
import { WEBHOOK_DELIVERY_LIFETIME_MS, WEBHOOK_RETRY_WINDOW_MS } from '../../../src/storage/rows.ts';
import type { JobKind, JobStatus, OwnerRef, Store, WebhookAttemptOutcome } from '../../../src/storage/store.ts';
import { jobEvent } from '../../../src/webhooks/events.ts';
import type { ContractContext } from './context.ts';

const NOW = 70_000_000;
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

const account = (id: string): OwnerRef => ({ kind: 'account', id });

/** Two handles (two instances) on a new, empty database, closed after `work`. */
async function withFreshStores(fresh: ContractContext['fresh'], work: (a: Store, b: Store) => Promise<void>): Promise<void> {
  const open = fresh();
  const a = await open();
  const b = await open();
  try {
    await work(a, b);
  } finally {
    await a.close();
    await b.close();
  }
}

/** A job of `owner` that ended with `status` at `endedAt`, its result a Response object. */
async function endedJob(
  store: Store,
  owner: OwnerRef,
  options: { id?: string; kind?: JobKind; status?: JobStatus; endedAt?: number; reservationId?: string } = {},
) {
  const id = options.id ?? timeOrderedId('resp');
  await store.createJob({
    id,
    kind: options.kind ?? 'response',
    owner,
    keyId: 'key_webhooks',
    status: 'queued',
    payload: null,
    result: { id, object: 'response', status: 'queued' },
    reservationId: options.reservationId ?? null,
    createdAt: NOW,
    expiresAt: NOW + 86_400_000,
  });
  const status = options.status ?? 'completed';
  const ended = await store.transitionJob(id, ['queued'], { status, result: { id, object: 'response', status }, now: options.endedAt ?? NOW + 10 });
  assert.ok(ended);
  return ended;
}

/** Announces every ended job as the dispatcher does; returns the deliveries created. */
async function announceAll(store: Store, now: number): Promise<number> {
  let created = 0;
  for (const job of await store.unannouncedJobs(1_000)) created += await store.announceJob({ jobId: job.id, event: jobEvent(job), now });
  return created;
}

const failure = (nextAttemptAt: number, httpStatus: number | null = 500): WebhookAttemptOutcome => ({
  delivered: false,
  httpStatus,
  error: httpStatus === null ? 'connection refused' : `the endpoint answered with status ${httpStatus}`,
  nextAttemptAt,
});

export function webhooksContract({ store, peer, fresh }: ContractContext): void {
  describe('webhooks', () => {
    test('endpoints: created, read by any instance, listed by owner, deleted', async () => {
      const owner = account(timeOrderedId('acct'));
      const created = await store().createWebhookEndpoint({ owner, url: 'https://hooks.example.com/a', secret: SECRET, eventTypes: null });
      assert.match(created.id, /^wh_[0-9a-z]{27}$/);
      assert.deepEqual(created, { id: created.id, owner, url: 'https://hooks.example.com/a', secret: SECRET, eventTypes: null, createdAt: created.createdAt });
      const filtered = await store().createWebhookEndpoint({
        owner,
        url: 'https://hooks.example.com/b',
        secret: SECRET,
        eventTypes: ['response.failed', 'response.completed'],
      });
      assert.deepEqual(filtered.eventTypes, ['response.failed', 'response.completed'], 'the order as given');
      const other = await store().createWebhookEndpoint({
        owner: { kind: 'organization', id: owner.id },
        url: 'https://x.example/',
        secret: SECRET,
        eventTypes: null,
      });

      assert.deepEqual(await peer().getWebhookEndpoint(created.id), created);
      assert.equal(await peer().getWebhookEndpoint('wh_missing'), null);
      assert.deepEqual(await peer().listWebhookEndpoints(owner), [created, filtered]);
      assert.deepEqual(await peer().listWebhookEndpoints({ kind: 'organization', id: owner.id }), [other]);
      const all = await peer().listWebhookEndpoints();
      assert.deepEqual(
        all.filter((endpoint) => endpoint.owner.id === owner.id),
        [created, filtered, other],
      );

      assert.deepEqual(await store().deleteWebhookEndpoint(created.id), created);
      assert.equal(await peer().deleteWebhookEndpoint(created.id), null);
      assert.deepEqual(await peer().listWebhookEndpoints(owner), [filtered]);
    });

    test("announcing: one delivery per endpoint of the job's owner that takes the type, once, whoever announces", async () => {
      await withFreshStores(fresh, async (a, b) => {
        const owner = account('acct_same');
        const endpoint = (eventTypes: string[] | null, of: OwnerRef = owner) =>
          a.createWebhookEndpoint({ owner: of, url: 'https://hooks.example.com/', secret: SECRET, eventTypes });
        const every = await endpoint(null);
        const failedOnly = await endpoint(['response.failed']);
        const completed = await endpoint(['video.completed', 'response.completed']);
        const organization = await endpoint(null, { kind: 'organization', id: 'acct_same' });
        await endpoint(null, account('acct_other'));

        const running = await a.createJob({
          id: 'resp_running',
          kind: 'response',
          owner,
          keyId: 'key_webhooks',
          status: 'in_progress',
          payload: null,
          result: null,
          reservationId: null,
          createdAt: NOW,
          expiresAt: NOW + 86_400_000,
        });
        assert.deepEqual(await a.unannouncedJobs(10), [], 'a job that has not ended is not announced');
        assert.equal(await a.announceJob({ jobId: running.id, event: null, now: NOW }), 0);

        const job = await endedJob(a, owner, { endedAt: NOW + 10 });
        assert.deepEqual(
          (await b.unannouncedJobs(10)).map((found) => found.id),
          [job.id],
        );
        const event = jobEvent(job)!;
        assert.equal(event.type, 'response.completed');
        const counts = await Promise.all([a.announceJob({ jobId: job.id, event, now: NOW + 20 }), b.announceJob({ jobId: job.id, event, now: NOW + 20 })]);
        assert.equal(counts[0] + counts[1], 2, 'two instances announcing at once make one delivery per endpoint');
        assert.equal(await a.announceJob({ jobId: job.id, event, now: NOW + 30 }), 0, 'an announced job is not announced again');
        assert.deepEqual(await b.unannouncedJobs(10), []);

        const deliveries = await b.listWebhookDeliveries({ jobId: job.id });
        assert.deepEqual(deliveries.map((delivery) => delivery.endpointId).sort(), [every.id, completed.id].sort());
        for (const delivery of deliveries) {
          assert.deepEqual(delivery, {
            endpointId: delivery.endpointId,
            eventId: event.id,
            eventType: 'response.completed',
            jobId: job.id,
            body: event.body,
            status: 'pending',
            attempts: 0,
            nextAttemptAt: NOW + 20,
            leaseOwner: null,
            leaseUntil: null,
            lastStatus: null,
            lastError: null,
            createdAt: NOW + 10,
            giveUpAt: NOW + 10 + WEBHOOK_RETRY_WINDOW_MS,
            finishedAt: null,
            expiresAt: NOW + 10 + WEBHOOK_DELIVERY_LIFETIME_MS,
          });
        }
        assert.equal((await a.listWebhookDeliveries({ endpointId: failedOnly.id })).length, 0, 'the type filter');

        const organizationJob = await endedJob(a, { kind: 'organization', id: 'acct_same' }, { status: 'failed' });
        assert.equal(await announceAll(b, NOW + 40), 1);
        assert.deepEqual(
          (await a.listWebhookDeliveries({ jobId: organizationJob.id })).map((delivery) => [delivery.endpointId, delivery.eventType]),
          [[organization.id, 'response.failed']],
          "an organization's endpoints get its own jobs, not its accounts'",
        );

        const unnamed = await endedJob(a, owner, { kind: 'video', status: 'incomplete' });
        assert.equal(jobEvent(unnamed), null, 'no event type describes an incomplete video');
        assert.equal(await a.announceJob({ jobId: unnamed.id, event: null, now: NOW + 50 }), 0);
        assert.deepEqual(await a.unannouncedJobs(10), [], 'an end without an event is marked all the same');
        assert.equal(await a.announceJob({ jobId: 'resp_missing', event, now: NOW + 50 }), 0);
        assert.equal(await a.countPendingWebhookDeliveries(), 3);
      });
    });

    test('a job is announced once its credit hold is settled or released, not while it is open', async () => {
      await withFreshStores(fresh, async (a, b) => {
        const owner = account((await a.createAccount({ name: 'holding' })).id);
        await a.addCredit(owner, 1_000n);
        await a.createWebhookEndpoint({ owner, url: 'https://hooks.example.com/holds', secret: SECRET, eventTypes: null });
        const ended = [];
        for (const status of ['completed', 'cancelled'] as const) {
          const id = timeOrderedId('resp');
          const hold = await a.reserve({ owner, amount: 100n, requestId: null, expiresAt: Date.now() + 3_600_000, holder: { kind: 'job', id } });
          assert.ok(hold);
          ended.push({ job: await endedJob(a, owner, { id, status, reservationId: hold.id }), hold });
        }
        const [charged, released] = ended;
        assert.deepEqual(await b.unannouncedJobs(10), [], 'their holds are open');
        assert.equal(await b.announceJob({ jobId: charged.job.id, event: jobEvent(charged.job), now: NOW + 20 }), 0);

        // The worker finishes the hold, amending the result on the way: the announcement carries the amended one.
        const amended = await a.transitionJob(charged.job.id, ['completed'], {
          result: { id: charged.job.id, object: 'response', amended: true },
          now: NOW + 30,
        });
        assert.ok(amended);
        assert.ok(await a.settle(charged.hold.id, 40n));
        assert.deepEqual(
          (await b.unannouncedJobs(10)).map((job) => job.id),
          [charged.job.id],
        );
        assert.equal(await announceAll(b, NOW + 40), 1);
        const [delivery] = await a.listWebhookDeliveries({ jobId: charged.job.id });
        assert.deepEqual(JSON.parse(delivery.body).data, { id: charged.job.id, object: 'response', amended: true });
        assert.equal(delivery.createdAt, NOW + 30);

        assert.equal(await a.release(released.hold.id), true);
        assert.equal(await announceAll(b, NOW + 50), 1);
        assert.equal((await a.listWebhookDeliveries({ jobId: released.job.id }))[0]?.eventType, 'response.cancelled');
      });
    });

    test('claims: leased to one instance at a time, most overdue first, up to the limit; a lapsed lease is claimed again', async () => {
      await withFreshStores(fresh, async (a, b) => {
        const owner = account('acct_claims');
        const endpoint = await a.createWebhookEndpoint({ owner, url: 'https://hooks.example.com/claims', secret: SECRET, eventTypes: null });
        for (let i = 0; i < 10; i++) await endedJob(a, owner, { endedAt: NOW + i });
        assert.equal(await announceAll(a, NOW + 100), 10);

        assert.deepEqual(await b.claimWebhookDeliveries({ worker: 'early', now: NOW + 99, leaseUntil: NOW + 1_000, limit: 10 }), [], 'not due yet');
        const claims = await Promise.all(
          Array.from({ length: 8 }, (_, index) =>
            (index % 2 === 0 ? a : b).claimWebhookDeliveries({ worker: `worker-${index}`, now: NOW + 100, leaseUntil: NOW + 1_000, limit: 3 }),
          ),
        );
        assert.ok(
          claims.every((claim) => claim.length <= 3),
          'never more than the limit',
        );
        const claimed = claims.flat();
        assert.equal(claimed.length, 10);
        assert.equal(new Set(claimed.map((delivery) => delivery.eventId)).size, 10, 'no delivery claimed twice');
        for (const delivery of claimed) {
          assert.equal(delivery.attempts, 1);
          assert.equal(delivery.leaseUntil, NOW + 1_000);
          assert.match(delivery.leaseOwner ?? '', /^worker-\d$/);
          assert.equal(delivery.url, endpoint.url);
          assert.equal(delivery.secret, SECRET);
        }
        assert.deepEqual(await a.claimWebhookDeliveries({ worker: 'late', now: NOW + 1_000, leaseUntil: NOW + 2_000, limit: 10 }), [], 'leases still held');

        const again = await b.claimWebhookDeliveries({ worker: 'late', now: NOW + 1_001, leaseUntil: NOW + 2_000, limit: 4 });
        assert.equal(again.length, 4, 'lapsed leases are claimed again');
        assert.deepEqual(
          again.map((delivery) => delivery.createdAt),
          [NOW, NOW + 1, NOW + 2, NOW + 3],
          'most overdue first',
        );
        assert.ok(again.every((delivery) => delivery.attempts === 2 && delivery.leaseOwner === 'late'));
        assert.deepEqual(await a.claimWebhookDeliveries({ worker: 'none', now: NOW + 1_001, leaseUntil: NOW + 2_000, limit: 0 }), []);
      });
    });

    test('attempts: delivered, retried at its time, ignored from a lost lease, given up 24 hours after the event', async () => {
      await withFreshStores(fresh, async (a, b) => {
        const owner = account('acct_attempts');
        await a.createWebhookEndpoint({ owner, url: 'https://hooks.example.com/attempts', secret: SECRET, eventTypes: null });
        const ended = NOW + 10;
        for (let i = 0; i < 3; i++) await endedJob(a, owner, { endedAt: ended });
        await announceAll(a, ended);
        const [first, second, third] = await a.claimWebhookDeliveries({ worker: 'w1', now: ended, leaseUntil: ended + 100, limit: 3 });
        const key = (delivery: { endpointId: string; eventId: string }) => ({ endpointId: delivery.endpointId, eventId: delivery.eventId });

        const delivered = await b.completeWebhookAttempt({ ...key(first), worker: 'w1', now: ended + 5, outcome: { delivered: true, httpStatus: 204 } });
        assert.equal(delivered?.status, 'delivered');
        assert.equal(delivered?.finishedAt, ended + 5);
        assert.equal(delivered?.lastStatus, 204);
        assert.equal(delivered?.leaseOwner, null);
        assert.equal(
          await b.completeWebhookAttempt({ ...key(first), worker: 'w1', now: ended + 6, outcome: failure(ended + 7) }),
          null,
          'a finished delivery does not change',
        );

        const retried = await a.completeWebhookAttempt({ ...key(second), worker: 'w1', now: ended + 5, outcome: failure(ended + 1_000) });
        assert.equal(retried?.status, 'pending');
        assert.equal(retried?.nextAttemptAt, ended + 1_000);
        assert.equal(retried?.lastStatus, 500);
        assert.equal(retried?.lastError, 'the endpoint answered with status 500');
        assert.equal(retried?.leaseOwner, null);
        assert.equal(retried?.leaseUntil, null);
        assert.equal(retried?.finishedAt, null);
        assert.equal(await a.countPendingWebhookDeliveries(), 2);

        // The third's lease lapses and another instance takes it: the first one's late outcome is ignored.
        const taken = await b.claimWebhookDeliveries({ worker: 'w2', now: ended + 101, leaseUntil: ended + 200, limit: 5 });
        assert.deepEqual(
          taken.map((delivery) => delivery.eventId),
          [third.eventId],
          'the retried one is not due before its time',
        );
        assert.equal(await a.completeWebhookAttempt({ ...key(third), worker: 'w1', now: ended + 102, outcome: { delivered: true, httpStatus: 200 } }), null);
        assert.equal(
          (await b.completeWebhookAttempt({ ...key(third), worker: 'w2', now: ended + 103, outcome: failure(ended + 104, null) }))?.lastStatus,
          null,
        );

        const due = await a.claimWebhookDeliveries({ worker: 'w3', now: ended + 1_000, leaseUntil: ended + 2_000, limit: 5 });
        assert.deepEqual(due.map((delivery) => delivery.eventId).sort(), [second.eventId, third.eventId].sort());
        assert.equal(due.find((delivery) => delivery.eventId === second.eventId)?.attempts, 2);
        assert.equal(
          (await b.completeWebhookAttempt({ ...key(third), worker: 'w3', now: ended + 1_001, outcome: { delivered: true, httpStatus: 200 } }))?.status,
          'delivered',
        );

        // The last retry may be due at the end of the window; one due after it gives up instead.
        const giveUpAt = ended + WEBHOOK_RETRY_WINDOW_MS;
        const last = await a.completeWebhookAttempt({ ...key(second), worker: 'w3', now: giveUpAt - 1, outcome: failure(giveUpAt) });
        assert.equal(last?.status, 'pending');
        const [final] = await b.claimWebhookDeliveries({ worker: 'w4', now: giveUpAt, leaseUntil: giveUpAt + 100, limit: 1 });
        assert.equal(final?.eventId, second.eventId);
        const failed = await b.completeWebhookAttempt({ ...key(second), worker: 'w4', now: giveUpAt + 1, outcome: failure(giveUpAt + 2, 503) });
        assert.equal(failed?.status, 'failed');
        assert.equal(failed?.finishedAt, giveUpAt + 1);
        assert.equal(failed?.lastStatus, 503);
        assert.equal(failed?.attempts, 3);
        assert.deepEqual(
          await a.claimWebhookDeliveries({ worker: 'w5', now: giveUpAt + 10_000, leaseUntil: giveUpAt + 20_000, limit: 5 }),
          [],
          'a failed delivery is never claimed again',
        );
        assert.equal(await a.countPendingWebhookDeliveries(), 0);
      });
    });

    test('deliveries expire a day after their retries end; removing an endpoint removes its deliveries', async () => {
      await withFreshStores(fresh, async (a, b) => {
        const owner = account('acct_expiry');
        const kept = await a.createWebhookEndpoint({ owner, url: 'https://hooks.example.com/kept', secret: SECRET, eventTypes: null });
        const removed = await a.createWebhookEndpoint({ owner, url: 'https://hooks.example.com/removed', secret: SECRET, eventTypes: null });
        const early = await endedJob(a, owner, { endedAt: NOW });
        const late = await endedJob(a, owner, { endedAt: NOW + 5 });
        assert.equal(await announceAll(a, NOW + 5), 4);

        const claimed = await b.claimWebhookDeliveries({ worker: 'w1', now: NOW + 5, leaseUntil: NOW + 100, limit: 2 });
        assert.deepEqual(
          claimed.map((delivery) => delivery.jobId),
          [early.id, early.id],
        );
        const inFlight = claimed.find((delivery) => delivery.endpointId === removed.id)!;
        assert.deepEqual(await b.deleteWebhookEndpoint(removed.id), removed);
        assert.deepEqual(
          (await a.listWebhookDeliveries({})).map((delivery) => delivery.endpointId),
          [kept.id, kept.id],
        );
        const outcome = failure(NOW + 7);
        assert.equal(await a.completeWebhookAttempt({ endpointId: removed.id, eventId: inFlight.eventId, worker: 'w1', now: NOW + 6, outcome }), null);

        assert.equal(await b.deleteExpiredWebhookDeliveries(NOW + WEBHOOK_DELIVERY_LIFETIME_MS), 0, 'kept until its expiry');
        assert.equal(await b.deleteExpiredWebhookDeliveries(NOW + WEBHOOK_DELIVERY_LIFETIME_MS + 1), 1);
        assert.deepEqual(
          (await a.listWebhookDeliveries({ endpointId: kept.id })).map((delivery) => delivery.jobId),
          [late.id],
        );
        assert.equal(await a.countPendingWebhookDeliveries(), 1);
      });
    });
  });
}
