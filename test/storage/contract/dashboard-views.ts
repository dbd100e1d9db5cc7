import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { timeOrderedId } from '../../../src/core/ids.ts';
import { requestLogRecord } from '../../../src/pipeline/request-log.ts';
import type { RequestFilter } from '../../../src/storage/dashboard-views.ts';
import type { PageRequest } from '../../../src/storage/people.ts';
import type { OwnerRef, Store, UpstreamAttempt } from '../../../src/storage/store.ts';
import { MINUTE, newAccount, type ContractContext } from './context.ts';

const BASE = 1_700_000_000_000;

/** Every page of a filter, following the cursors. */
async function allPages<T>(read: (page: PageRequest) => Promise<{ items: readonly T[]; next: string | null }>, limit: number): Promise<T[][]> {
  const pages: T[][] = [];
  let after: string | null = null;
  do {
    const page = await read({ after, limit });
    pages.push([...page.items]);
    after = page.next;
  } while (after !== null);
  return pages;
}

export function dashboardViewsContract({ store, peer }: ContractContext): void {
  describe('dashboard views', () => {
    test("requests of an organization: its own and its accounts', never another's", async () => {
      const organization = await store().createOrganization({ name: 'views-org' });
      const inside = await store().createAccount({ name: 'views-in-org', organizationId: organization.id });
      const outside = await newAccount(store(), 'views-outside');
      const owners: OwnerRef[] = [{ kind: 'organization', id: organization.id }, { kind: 'account', id: inside.id }, outside];
      const rows = owners.map((owner, index) =>
        requestLogRecord({
          requestId: timeOrderedId('req'),
          owner,
          keyId: 'key_org',
          route: 'chat',
          stream: false,
          createdAt: BASE + index * 1_000,
          durationMs: 10,
          modelId: 'model-a',
          status: 'completed',
          httpStatus: 200,
        }),
      );
      await store().recordRequests(rows);
      const lines = await peer().pageRequests({ owner: owners[0] }, { limit: 10 });
      assert.deepEqual(
        lines.items.map((line) => line.id),
        [rows[1]!.id, rows[0]!.id],
      );
    });

    test('requests: newest first in keyset pages, under every filter, never another owner’s', async () => {
      const owner = await newAccount(store(), 'views');
      const other = await newAccount(store(), 'views-other');
      const rows = Array.from({ length: 7 }, (_, index) =>
        requestLogRecord({
          requestId: timeOrderedId('req'),
          owner: index === 6 ? other : owner,
          keyId: index % 2 === 0 ? 'key_even' : 'key_odd',
          route: index === 5 ? 'messages' : 'chat',
          stream: false,
          // Two rows share a millisecond: the id breaks the tie.
          createdAt: BASE + Math.min(index, 5) * 1_000,
          durationMs: 10,
          modelId: index < 3 ? 'model-a' : 'model-b',
          status: index === 4 ? 'failed' : 'completed',
          httpStatus: index === 4 ? 503 : 200,
          cost: BigInt(index) * 1_000n,
        }),
      );
      await store().recordRequests(rows);
      const ids = (filter: RequestFilter, limit = 2) =>
        allPages((page) => peer().pageRequests({ owner, ...filter }, page), limit).then((pages) => pages.flat().map((line) => line.id));
      const mine = rows.slice(0, 6).sort((a, b) => b.createdAt - a.createdAt || (b.id < a.id ? -1 : 1));
      assert.deepEqual(
        await ids({}),
        mine.map((row) => row.id),
        'every row once, newest first, across pages',
      );
      const pages = await allPages((page) => peer().pageRequests({ owner }, page), 4);
      assert.deepEqual(
        pages.map((page) => page.length),
        [4, 2],
      );
      assert.deepEqual(
        await ids({ keyId: 'key_odd' }),
        mine.filter((row) => row.keyId === 'key_odd').map((row) => row.id),
      );
      assert.deepEqual(
        await ids({ model: 'model-a' }),
        mine.filter((row) => row.model === 'model-a').map((row) => row.id),
      );
      assert.deepEqual(await ids({ status: 'failed' }), [rows[4]!.id]);
      assert.deepEqual(await ids({ route: 'messages' }), [rows[5]!.id]);
      assert.deepEqual(await ids({ minCost: 2_000n, maxCost: 3_000n }), [rows[3]!.id, rows[2]!.id]);
      assert.deepEqual(await ids({ from: BASE + 1_000, to: BASE + 3_000 }), [rows[2]!.id, rows[1]!.id]);
      assert.deepEqual(await ids({ requestId: rows[6]!.id }), [], 'another owner’s request is not found');
      const [line] = (await peer().pageRequests({ requestId: rows[6]!.id }, { limit: 5 })).items;
      assert.deepEqual(line, {
        id: rows[6]!.id,
        owner: other,
        keyId: 'key_even',
        route: 'chat',
        model: 'model-b',
        provider: null,
        status: 'completed',
        httpStatus: 200,
        inputTokens: 0,
        outputTokens: 0,
        cost: 6_000n,
        errorCode: null,
        createdAt: BASE + 5_000,
        durationMs: 10,
      });
    });

    test('holds: a request’s reservation and the charge that settled it; a job’s by its reservation', async () => {
      const owner = await newAccount(store(), 'holds');
      await store().addCredit(owner, 10_000n);
      const requestId = timeOrderedId('req');
      const reservation = await store().reserve({ owner, amount: 4_000n, requestId, expiresAt: Date.now() + MINUTE });
      assert.ok(reservation);
      // SQLite keeps a young open hold in memory only (sqlite/wallet-book.ts): none on file yet.
      const open = await peer().holdOf({ requestId });
      if (open !== null) {
        assert.equal(open.reservation.status, 'open');
        assert.deepEqual(open.charges, []);
      }
      await store().settle(reservation.id, 1_500n, requestId);
      const settled = await peer().holdOf({ reservationId: reservation.id });
      assert.equal(settled?.reservation.status, 'settled');
      assert.equal(settled?.reservation.amount, 4_000n);
      assert.deepEqual(
        settled?.charges.map((entry) => [entry.kind, entry.amount, entry.requestId]),
        [['charge', 1_500n, requestId]],
      );
      assert.equal(await peer().holdOf({ requestId: 'req_none' }), null);
    });

    test('jobs: by owner, kind and state, newest first', async () => {
      const owner: OwnerRef = await newAccount(store(), 'jobs-view');
      const make = (kind: 'response' | 'video', createdAt: number) =>
        store().createJob({
          id: timeOrderedId(kind === 'video' ? 'video' : 'resp'),
          kind,
          owner,
          keyId: 'key_jobs',
          status: 'queued',
          payload: {},
          result: {},
          reservationId: null,
          createdAt,
          expiresAt: Date.now() + MINUTE,
        });
      const first = await make('response', BASE);
      const second = await make('video', BASE + 1);
      const third = await make('response', BASE + 2);
      await store().transitionJob(first.id, ['queued'], { status: 'cancelled', now: BASE + 3 });
      const ids = async (filter: Parameters<Store['pageJobs']>[0]) =>
        (await allPages((page) => peer().pageJobs({ owner, ...filter }, page), 1)).flat().map((job) => job.id);
      assert.deepEqual(await ids({}), [third.id, second.id, first.id]);
      assert.deepEqual(await ids({ kind: 'video' }), [second.id]);
      assert.deepEqual(await ids({ state: 'ended' }), [first.id]);
      assert.deepEqual(await ids({ state: 'queued', kind: 'response' }), [third.id]);
    });

    test('ledger integrity: every wallet adds up, the one with holds and charges included', async () => {
      const owner = await newAccount(store(), 'integrity');
      await store().addCredit(owner, 9_000n);
      const held = await store().reserve({ owner, amount: 2_000n, requestId: null, expiresAt: Date.now() + MINUTE });
      const settled = await store().reserve({ owner, amount: 3_000n, requestId: null, expiresAt: Date.now() + MINUTE });
      assert.ok(held && settled);
      await store().settle(settled.id, 1_000n);
      const checks = await peer().ledgerIntegrity();
      const mine = checks.find((check) => check.owner.id === owner.id);
      // The open hold is on file on PostgreSQL; SQLite writes a young one later (sqlite/wallet-book.ts).
      assert.ok(mine);
      assert.deepEqual([mine.credits, mine.charges, mine.balance, mine.difference, mine.openHolds === mine.reserved], [9_000n, 1_000n, 8_000n, 0n, true]);
      assert.deepEqual(
        checks.filter((check) => check.difference !== 0n),
        [],
      );
      const counts = await peer().operationsCounts(0);
      assert.ok(counts.queuedJobs >= 0 && counts.failedWebhookDeliveries >= 0);
    });

    test('endpoint figures: each endpoint’s calls in a window from the rows’ attempts, nearest-rank percentiles', async () => {
      const owner = await newAccount(store(), 'figures');
      // A window of its own: no other test writes rows there.
      const from = 1_600_000_000_000;
      const to = from + 60 * MINUTE;
      const served = (startMs: number, firstByteMs: number, durationMs: number): UpstreamAttempt => ({
        provider: 'figures-up',
        upstreamModel: 'm',
        startMs,
        outcome: 'served',
        firstByteMs,
        durationMs,
      });
      const row = (createdAt: number, attempts: UpstreamAttempt[]) =>
        requestLogRecord({
          requestId: timeOrderedId('req'),
          owner,
          keyId: 'key_figures',
          route: 'chat',
          stream: false,
          createdAt,
          durationMs: 100,
          status: 'completed',
          httpStatus: 200,
          attempts,
        });
      await store().recordRequests([
        row(from, [
          {
            provider: 'figures-down',
            upstreamModel: 'm',
            startMs: 0,
            outcome: 'failed',
            firstByteMs: null,
            durationMs: 3,
            status: 503,
            errorCode: 'upstream_unavailable',
            message: 'busy \u0000',
          },
          served(4, 7, 40),
        ]),
        row(from + MINUTE, [{ provider: 'figures-down', upstreamModel: 'm', startMs: 0, outcome: 'skipped', reason: 'circuit_open' }, served(0, 9, 60)]),
        row(from + 2 * MINUTE, [served(0, 1, 10)]),
        row(from + 3 * MINUTE, [served(0, 2, 20)]),
        row(to - 1, [served(0, 3, 30)]),
        // Refused before any call, and outside the window: neither counts.
        row(from + 4 * MINUTE, []),
        row(to, [served(0, 1, 1)]),
        row(from - 1, [served(0, 1, 1)]),
      ]);
      assert.deepEqual(await peer().endpointFigures(from, to), [
        { endpoint: 'figures-down:m', attempts: 1, failures: 1, latencyMs: { p50: 3, p95: 3 }, firstByteMs: null },
        { endpoint: 'figures-up:m', attempts: 5, failures: 0, latencyMs: { p50: 30, p95: 60 }, firstByteMs: { p50: 3, p95: 9 } },
      ]);
      assert.deepEqual(await peer().endpointFigures(to + MINUTE, to + 2 * MINUTE), []);
    });
  });
}
