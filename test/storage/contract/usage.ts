import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { timeOrderedId } from '../../../src/core/ids.ts';
import type { OwnerRef, Store } from '../../../src/storage/store.ts';
import { usageCsv } from '../../../src/dashboard/usage-csv.ts';
import { usageFormat } from '../../../src/dashboard/usage-formats.ts';
import { usageBody } from '../../../src/dashboard/usage-render.ts';
import type { UsageView } from '../../../src/dashboard/usage-view.ts';
import type { UsageQuery, UsageRow } from '../../../src/storage/usage.ts';
import { type ContractContext, newAccount, sum } from './context.ts';
import { record } from './request-log.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A month in the store's past: 2026-03-01 to 2026-04-01 UTC. */
const MONTH_START = Date.UTC(2026, 2, 1);
const MONTH_END = Date.UTC(2026, 3, 1);

function total(rows: readonly UsageRow[], pick: (row: UsageRow) => bigint | number): bigint {
  return rows.reduce((sum, row) => sum + BigInt(pick(row)), 0n);
}

/** Holds `held`, then settles `cost` of it (null: releases it), and writes the request's row as the pipeline does. */
async function request(store: Store, owner: OwnerRef, keyId: string, held: bigint, cost: bigint | null, overrides: Parameters<typeof record>[1]) {
  const reservation = await store.reserve({ owner, amount: held, requestId: null, expiresAt: Date.now() + DAY, keyId });
  assert.ok(reservation);
  const charged = cost === null ? 0n : (await store.settle(reservation.id, cost))!.charged;
  if (cost === null) assert.ok(await store.release(reservation.id));
  return record(owner, { id: timeOrderedId('req'), keyId, cost: charged, ...overrides });
}

export function usageContract({ store, peer }: ContractContext): void {
  describe('usage rollups', () => {
    test('a month of usage by day equals the ledger charges of its requests, to the pico-dollar, with cancellations, failures and partial streams', async () => {
      const organization = await store().createOrganization({ name: 'usage org' });
      const account = await store().createAccount({ name: 'usage member', organizationId: organization.id });
      const owner: OwnerRef = { kind: 'account', id: account.id };
      await store().addCredit(owner, 10n ** 15n);
      const keyId = timeOrderedId('key');
      const at = (day: number, hour: number) => MONTH_START + day * DAY + hour * HOUR + 1_234;
      const rows = [
        await request(store(), owner, keyId, 5_000_000n, 1_234_567n, { createdAt: at(0, 0), cacheReadTokens: 100, cacheSavings: 900n }),
        await request(store(), owner, keyId, 5_000_000n, 3_333_333n, { createdAt: at(0, 0), model: 'model-b' }),
        // A stream cut short: charged for what it produced.
        await request(store(), owner, keyId, 5_000_000n, 777n, { createdAt: at(3, 5), status: 'incomplete', stream: true }),
        // A cancelled request and a failed one: their holds went back, nothing was charged.
        await request(store(), owner, keyId, 5_000_000n, null, { createdAt: at(3, 5), status: 'cancelled', httpStatus: 499, outputTokens: 0 }),
        await request(store(), owner, keyId, 5_000_000n, null, {
          createdAt: at(10, 23),
          status: 'failed',
          httpStatus: 502,
          route: 'images.generations',
          images: 0,
        }),
        await request(store(), owner, keyId, 9_000_000n, 8_000_000n, {
          createdAt: at(30, 23),
          route: 'images.generations',
          images: 2,
          inputTokens: 0,
          outputTokens: 0,
        }),
        await request(store(), owner, keyId, 9_000_000n, 4_000_000n, {
          createdAt: at(12, 1),
          route: 'videos',
          videoSeconds: 8,
          inputTokens: 0,
          outputTokens: 0,
        }),
      ];
      // Outside the month: not in its export.
      const before = await request(store(), owner, keyId, 5_000_000n, 11n, { createdAt: MONTH_START - 1 });
      const after = await request(store(), owner, keyId, 5_000_000n, 13n, { createdAt: MONTH_END });
      await store().recordRequests([...rows, before]);
      // A retried batch (a row written twice) is counted once.
      await peer().recordRequests([rows[0]!, after]);

      const month = await peer().usage({ grain: 'day', from: MONTH_START, to: MONTH_END, filter: { account: account.id }, by: null });
      const charges = (await store().listEntries(owner)).filter((entry) => entry.kind === 'charge');
      const inMonth = charges.filter((entry) => entry.amount !== 11n && entry.amount !== 13n);
      assert.equal(
        total(month, (row) => row.cost),
        sum(inMonth.map((entry) => entry.amount)),
      );
      assert.equal(
        total(month, (row) => row.cost),
        1_234_567n + 3_333_333n + 777n + 8_000_000n + 4_000_000n,
      );
      assert.equal(
        total(month, (row) => row.requests),
        7n,
      );
      assert.deepEqual(
        month.map((row) => row.period),
        [0, 3, 10, 12, 30].map((day) => MONTH_START + day * DAY),
      );
      assert.equal(
        total(month, (row) => row.images),
        2n,
      );
      assert.equal(
        total(month, (row) => row.videoSeconds),
        8n,
      );
      assert.equal(
        total(month, (row) => row.cacheSavings),
        900n,
      );
      assert.equal(
        total(month, (row) => row.cacheReadTokens),
        100n + 5n * 2n + 2n,
      );

      // Hours, broken down by status; the hourly and the daily rollup agree.
      const hours = await peer().usage({ grain: 'hour', from: MONTH_START, to: MONTH_END, filter: { key: keyId }, by: 'status' });
      assert.equal(
        total(hours, (row) => row.cost),
        total(month, (row) => row.cost),
      );
      const day3 = hours.filter((row) => row.period === MONTH_START + 3 * DAY + 5 * HOUR);
      assert.deepEqual(
        day3.map((row) => [row.group, row.requests, row.cost]),
        [
          ['cancelled', 1, 0n],
          ['incomplete', 1, 777n],
        ],
      );

      // Filters and breakdowns by the other dimensions.
      const byOrganization = await peer().usage({ grain: 'day', from: MONTH_START, to: MONTH_END, filter: { organization: organization.id }, by: 'route' });
      const routes = new Map<string | null, bigint>();
      for (const row of byOrganization) routes.set(row.group, (routes.get(row.group) ?? 0n) + row.cost);
      assert.deepEqual(Object.fromEntries(routes), { chat: 1_234_567n + 3_333_333n + 777n, 'images.generations': 8_000_000n, videos: 4_000_000n });
      const modelB = await peer().usage({ grain: 'day', from: MONTH_START, to: MONTH_END, filter: { account: account.id, model: 'model-b' }, by: 'model' });
      assert.deepEqual(
        modelB.map((row) => [row.group, row.cost]),
        [['model-b', 3_333_333n]],
      );
      const provider = await peer().usage({
        grain: 'day',
        from: MONTH_START,
        to: MONTH_END,
        filter: { provider: 'simulated', status: 'completed', key: keyId },
        by: 'provider',
      });
      assert.equal(
        total(provider, (row) => row.requests),
        4n,
      );
      const other = await peer().usage({ grain: 'day', from: MONTH_START, to: MONTH_END, filter: { account: 'acct_nobody' }, by: null });
      assert.deepEqual(other, []);
    });

    test('a view made into its page and its export where it is read is what its rows make here', async () => {
      const account = await newAccount(store(), 'formatted');
      const keyId = timeOrderedId('key');
      await store().recordRequests(
        [0, 1, 1, 7].map((day, index) =>
          record(account, {
            id: timeOrderedId('req'),
            keyId,
            model: index === 2 ? 'model-b' : 'model-a',
            createdAt: MONTH_START + day * DAY + HOUR,
            cost: 1_000_001n,
          }),
        ),
      );
      const query: UsageQuery = { grain: 'day', from: MONTH_START, to: MONTH_END, filter: { account: account.id }, by: 'model' };
      const view: UsageView = { query, fromDay: '2026-03-01', toDay: '2026-03-31', fixed: new Set(['account']) };
      const rows = await peer().usage(query);
      assert.equal(rows.length, 4);
      assert.equal(await peer().usageText(query, usageFormat('usageExport', view)), usageCsv(view, rows));
      const page = await peer().usageText(query, usageFormat('usagePage', view));
      assert.equal(page, usageBody(view, rows).text);
      assert.match(page, /model-b/);
      await assert.rejects(peer().usageText(query, { ...usageFormat('usagePage', view), name: 'noSuchFormat' }), /no formatter noSuchFormat/);
    });

    test('batches of two instances adding to the same rollup rows at once, in opposite orders, all count', async () => {
      const owner = await newAccount(store(), 'busy');
      const keys = ['key_a', 'key_b', 'key_c', 'key_d'];
      const batch = (order: readonly string[]) =>
        order.map((keyId, index) => record(owner, { id: timeOrderedId('req'), keyId, createdAt: MONTH_START + index * HOUR, cost: 10n }));
      const writes = Array.from({ length: 20 }, (_, round) =>
        (round % 2 === 0 ? store() : peer()).recordRequests(batch(round % 2 === 0 ? keys : [...keys].reverse())),
      );
      await Promise.all(writes);
      const rows = await peer().usage({ grain: 'day', from: MONTH_START, to: MONTH_END, filter: { account: owner.id }, by: 'key' });
      assert.deepEqual(
        rows.map((row) => [row.group, row.requests, row.cost]),
        keys.map((key) => [key, 20, 200n]),
      );
    });

    test('rows of one rollup row in one batch add up, a row given twice counted once', async () => {
      const owner = await newAccount(store(), 'one key');
      const rows = [1n, 20n, 300n].map((cost, index) =>
        record(owner, { id: timeOrderedId('req'), keyId: 'key_one', createdAt: MONTH_START + index, cost, outputTokens: 7 }),
      );
      await store().recordRequests([...rows, rows[1]!]);
      const hours = await peer().usage({ grain: 'hour', from: MONTH_START, to: MONTH_START + HOUR, filter: { account: owner.id }, by: null });
      assert.deepEqual(
        hours.map((row) => [row.period, row.requests, row.cost, row.outputTokens]),
        [[MONTH_START, 3, 321n, 21]],
      );
    });

    test('one batch of a key over two hours of a day counts each hour apart and both in the day', async () => {
      const owner = await newAccount(store(), 'two hours');
      const rows = [MONTH_START + 10, MONTH_START + HOUR + 10, MONTH_START + HOUR + 20].map((createdAt, index) =>
        record(owner, { id: timeOrderedId('req'), keyId: 'key_hours', createdAt, cost: BigInt(index + 1) }),
      );
      await store().recordRequests(rows);
      const query = { from: MONTH_START, to: MONTH_START + 2 * HOUR, filter: { account: owner.id }, by: null } as const;
      const hours = await peer().usage({ ...query, grain: 'hour' });
      assert.deepEqual(
        hours.map((row) => [row.period, row.requests, row.cost]),
        [
          [MONTH_START, 1, 1n],
          [MONTH_START + HOUR, 2, 5n],
        ],
      );
      const days = await peer().usage({ ...query, grain: 'day', to: MONTH_END });
      assert.deepEqual(
        days.map((row) => [row.requests, row.cost]),
        [[3, 6n]],
      );
    });

    test('a key of an organization counts under the organization, and under no account', async () => {
      const organization = await store().createOrganization({ name: 'org owner' });
      const owner: OwnerRef = { kind: 'organization', id: organization.id };
      const keyId = timeOrderedId('key');
      await store().recordRequests([record(owner, { id: timeOrderedId('req'), keyId, createdAt: MONTH_START + 5, cost: 42n })]);
      const rows = await peer().usage({ grain: 'hour', from: MONTH_START, to: MONTH_START + HOUR, filter: { organization: organization.id }, by: 'account' });
      assert.deepEqual(
        rows.map((row) => [row.period, row.group, row.requests, row.cost]),
        [[MONTH_START, '', 1, 42n]],
      );
    });
  });
}
