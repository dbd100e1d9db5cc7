/**
 * The contract against PostgreSQL, in a schema of its own that is dropped at the end. PostgreSQL is
 * required: when it is unreachable these tests fail rather than skip.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { GatewayError } from '../../src/core/errors.ts';
import { timeOrderedId } from '../../src/core/ids.ts';
import { POSTGRES_MIGRATIONS } from '../../src/storage/migrations/postgres.ts';
import { LIVE_SESSION_LAPSES } from '../../src/storage/postgres/instances.ts';
import { SQLITE_MIGRATIONS } from '../../src/storage/migrations/sqlite.ts';
import { openStore, SQLITE_FILE_NAME } from '../../src/storage/open-store.ts';
import type { OwnerRef, Store } from '../../src/storage/store.ts';
import { dropSchemas, newSchemaName, TEST_DATABASE_URL } from '../helpers/postgres.ts';
import { storeContract } from './contract.ts';
import { assertLedgerConsistent, MINUTE, sum } from './contract/context.ts';

const dataDir = tmpdir();
const schemas: string[] = [];

function newSchema(): string {
  const schema = newSchemaName('test_storage');
  schemas.push(schema);
  return schema;
}

after(() => dropSchemas(schemas));

const contractSchema = newSchema();
storeContract(
  'postgres',
  () => openStore({ databaseUrl: TEST_DATABASE_URL, dataDir, schema: contractSchema, poolSize: 8, leases: true }),
  () => {
    const schema = newSchema();
    return () => openStore({ databaseUrl: TEST_DATABASE_URL, dataDir, schema, poolSize: 4, leases: true });
  },
);

describe('postgres specifics', () => {
  test('instances starting at once on a new schema apply each migration exactly once', async () => {
    const schema = newSchema();
    const stores = await Promise.all(Array.from({ length: 4 }, () => openStore({ databaseUrl: TEST_DATABASE_URL, dataDir, schema, poolSize: 2 })));
    await Promise.all(stores.map((store) => store.close()));
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
      assert.deepEqual(
        rows.map((row) => row.version),
        POSTGRES_MIGRATIONS.map((migration) => migration.version),
      );
    } finally {
      await client.end();
    }
  });

  test('both engines know the same migrations', () => {
    const outline = (migrations: typeof SQLITE_MIGRATIONS) => migrations.map(({ version, name }) => ({ version, name }));
    assert.deepEqual(outline(POSTGRES_MIGRATIONS), outline(SQLITE_MIGRATIONS));
  });

  /**
   * What only PostgreSQL needs: the blob store in the database (SQLite keeps blobs in a folder) and
   * the instances' heartbeats (one SQLite file has one server).
   */
  const POSTGRES_ONLY_TABLES = ['blobs', 'blob_chunks', 'instances'];

  test('both engines, migrated, have the same tables with the same columns, nullable alike', async () => {
    // `table.column` with `NOT NULL` where the column refuses nulls (a primary key always does).
    const sqliteDir = await mkdtemp(join(tmpdir(), 'gateway-parity-'));
    const schema = newSchema();
    try {
      await (await openStore({ dataDir: sqliteDir })).close();
      await (await openStore({ databaseUrl: TEST_DATABASE_URL, dataDir, schema, poolSize: 1 })).close();
      const file = new DatabaseSync(join(sqliteDir, SQLITE_FILE_NAME), { readOnly: true });
      const sqliteColumns: string[] = [];
      try {
        const tables = file.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[];
        for (const { name } of tables) {
          for (const column of file.prepare(`PRAGMA table_info(${name})`).all() as { name: string; notnull: number; pk: number }[]) {
            sqliteColumns.push(`${name}.${column.name}${column.notnull || column.pk ? ' NOT NULL' : ''}`);
          }
        }
      } finally {
        file.close();
      }
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      let postgresColumns: string[];
      try {
        const { rows } = await client.query(`SELECT table_name, column_name, is_nullable FROM information_schema.columns WHERE table_schema = $1`, [schema]);
        postgresColumns = rows.map((row) => `${row.table_name}.${row.column_name}${row.is_nullable === 'NO' ? ' NOT NULL' : ''}`);
      } finally {
        await client.end();
      }
      const shared = (columns: string[]) => columns.filter((column) => !POSTGRES_ONLY_TABLES.includes(column.split('.')[0])).sort();
      const onlyIn = (these: string[], those: string[]) => these.filter((column) => !those.includes(column));
      assert.deepEqual(
        { postgresOnly: onlyIn(shared(postgresColumns), sqliteColumns), sqliteOnly: onlyIn(sqliteColumns, postgresColumns) },
        { postgresOnly: [], sqliteOnly: [] },
      );
      for (const table of POSTGRES_ONLY_TABLES)
        assert.ok(
          postgresColumns.some((column) => column.startsWith(`${table}.`)),
          `${table} exists`,
        );
    } finally {
      await rm(sqliteDir, { recursive: true, force: true });
    }
  });

  test('schema names are plain identifiers', async () => {
    await assert.rejects(openStore({ databaseUrl: TEST_DATABASE_URL, dataDir, schema: 'x; DROP TABLE y' }), RangeError);
  });

  test("a live instance releases the holds of an instance whose heartbeat lapsed, never a live one's", async () => {
    const schema = newSchema();
    // Long enough that the live instances, in this busy process, never miss their own beats.
    const heartbeat = { lapseMs: 3_000 };
    const open = (databaseUrl = TEST_DATABASE_URL) => openStore({ databaseUrl, dataDir, schema, poolSize: 2, heartbeat });
    const liveA = await open();
    const liveB = await open();
    // The lost instance reaches the database through a relay the test pulls the plug on: its
    // heartbeat stops as with a killed process or a lost machine.
    const proxy = await startProxy(new URL(TEST_DATABASE_URL));
    const lost = await open(proxy.url);
    try {
      const owner = await fundedOwner(liveA, 'lapse', 1_000n);
      const expiresAt = Date.now() + 600_000;
      const lostHold = (await lost.reserve({ owner, amount: 300n, requestId: null, expiresAt }))!;
      const lostSettled = (await lost.reserve({ owner, amount: 100n, requestId: null, expiresAt }))!;
      await lost.settle(lostSettled.id, 40n);
      const holdA = (await liveA.reserve({ owner, amount: 200n, requestId: null, expiresAt }))!;
      const holdB = (await liveB.reserve({ owner, amount: 100n, requestId: null, expiresAt }))!;
      assert.deepEqual(lostHold.holder, { kind: 'instance', id: lost.instanceId });
      await proxy.shutDown();

      const deadline = Date.now() + 30_000;
      while ((await liveA.getBalance(owner)).reserved !== 300n && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(await liveA.getBalance(owner), { balance: 960n, reserved: 300n, available: 660n });
      assert.equal((await liveA.getReservation(lostHold.id))?.status, 'released');
      assert.equal((await liveA.getReservation(holdA.id))?.status, 'open', 'the live instances keep theirs');
      assert.equal((await liveA.getReservation(holdB.id))?.status, 'open');
      assert.deepEqual(await liveB.settle(holdB.id, 100n), { charged: 100n, released: 0n, shortfall: 0n });
      await assertLedgerConsistent(liveA, owner, [lostHold.id, lostSettled.id, holdA.id, holdB.id]);

      // A stopped instance marks itself lapsed: what it still held goes at a live instance's next beat.
      const stopping = await open();
      const leftOpen = (await stopping.reserve({ owner, amount: 50n, requestId: null, expiresAt }))!;
      await stopping.close();
      const stopDeadline = Date.now() + 30_000;
      while ((await liveB.getReservation(leftOpen.id))?.status === 'open' && Date.now() < stopDeadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal((await liveB.getReservation(leftOpen.id))?.status, 'released');
      assert.equal((await liveA.getReservation(holdA.id))?.status, 'open');
      await assertLedgerConsistent(liveA, owner, [lostHold.id, lostSettled.id, holdA.id, holdB.id, leftOpen.id]);
    } finally {
      await closeAll(proxy, [lost, liveA, liveB]);
    }
  });

  test('an instance whose beats come late keeps its holds while its database session is open, up to the backstop; a cut one loses them after the lapse', async () => {
    const schema = newSchema();
    const lapseMs = 5_000;
    const open = (databaseUrl: string, beatLapseMs: number) => openStore({ databaseUrl, dataDir, schema, poolSize: 2, heartbeat: { lapseMs: beatLapseMs } });
    const judge = await open(TEST_DATABASE_URL, lapseMs);
    // Both beat once, when they open, and not again for minutes. One is a live instance starved of
    // its beats (its session stays open); the other reaches the database through a relay the test
    // cuts, as a killed process's connections close. Their heartbeats are aged by the test rather
    // than waited for: the judge's next beats decide.
    const late = await open(TEST_DATABASE_URL, 600_000);
    const proxy = await startProxy(new URL(TEST_DATABASE_URL));
    const cut = await open(proxy.url, 600_000);
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    const age = (ms: number, ids: string[]) => admin.query(`UPDATE ${schema}.instances SET heartbeat_at = heartbeat_at - $1 WHERE id = ANY ($2)`, [ms, ids]);
    try {
      const owner = await fundedOwner(judge, 'late beats', 1_000n);
      const expiresAt = Date.now() + 600_000;
      const lateHold = (await late.reserve({ owner, amount: 200n, requestId: null, expiresAt }))!;
      const cutHold = (await cut.reserve({ owner, amount: 300n, requestId: null, expiresAt }))!;
      await proxy.shutDown();

      const status = async (id: string) => (await judge.getReservation(id))?.status;
      const deadline = Date.now() + 60_000;
      // Past the lapse, far from the backstop (LIVE_SESSION_LAPSES lapses).
      await age(lapseMs + 1_000, [late.instanceId, cut.instanceId]);
      while ((await status(cutHold.id)) === 'open' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(await status(cutHold.id), 'released', "the cut instance's hold is released once its heartbeat lapsed");
      assert.equal(await status(lateHold.id), 'open', `the late one's is kept while its session is open (the backstop is ${LIVE_SESSION_LAPSES} lapses)`);

      await age(LIVE_SESSION_LAPSES * lapseMs, [late.instanceId]);
      while ((await status(lateHold.id)) === 'open' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(await status(lateHold.id), 'released', 'past the backstop, a live session does not keep a silent instance alive');
      assert.deepEqual(await judge.getBalance(owner), { balance: 1_000n, reserved: 0n, available: 1_000n });
      await assertLedgerConsistent(judge, owner, [lateHold.id, cutHold.id]);
    } finally {
      await admin.end();
      await closeAll(proxy, [cut, late, judge]);
    }
  });

  test("a job whose lease lapsed stays with its live instance up to the backstop; a cut instance's is claimed at once", async () => {
    const schema = newSchema();
    // Beating once, when they open: their sessions are what tells them alive.
    const open = (databaseUrl: string) => openStore({ databaseUrl, dataDir, schema, poolSize: 2, heartbeat: { lapseMs: 600_000 } });
    const live = await open(TEST_DATABASE_URL);
    const claimer = await open(TEST_DATABASE_URL);
    const proxy = await startProxy(new URL(TEST_DATABASE_URL));
    const cut = await open(proxy.url);
    try {
      const at = Date.now();
      const lease = 1_000;
      const newJob = (createdAt: number) =>
        ({
          id: timeOrderedId('resp'),
          kind: 'response',
          owner: { kind: 'account', id: 'acct_leases' },
          keyId: 'key_leases',
          status: 'queued',
          payload: null,
          result: null,
          reservationId: null,
          createdAt,
          expiresAt: at + 86_400_000,
        }) as const;
      await live.createJob(newJob(at - 2));
      await live.createJob(newJob(at - 1));
      const liveJob = (await live.claimJob('response', live.instanceId, at, at + lease))!;
      const cutJob = (await cut.claimJob('response', cut.instanceId, at, at + lease))!;
      assert.notEqual(liveJob.id, cutJob.id);
      await proxy.shutDown();

      // Once the cut instance's session is gone (its server process ends a moment after the cut).
      const lapsed = at + lease + 1;
      let taken = await claimer.claimJob('response', claimer.instanceId, lapsed, lapsed + lease);
      for (const deadline = Date.now() + 10_000; taken === null && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        taken = await claimer.claimJob('response', claimer.instanceId, lapsed, lapsed + lease);
      }
      assert.equal(taken?.id, cutJob.id, "the cut instance's job is claimed once its lease lapsed");
      assert.equal(await claimer.claimJob('response', claimer.instanceId, lapsed, lapsed + lease), null, "the live instance's is left to it");
      const backstop = at + LIVE_SESSION_LAPSES * lease + 1;
      assert.equal((await claimer.claimJob('response', claimer.instanceId, backstop, backstop + lease))?.id, liveJob.id, 'past the backstop it is claimed');
    } finally {
      await closeAll(proxy, [cut, claimer, live]);
    }
  });

  test("a busy wallet's holds and settlements share group commits: a few wallet-row writes, not two per request", async () => {
    const schema = newSchema();
    const stores = await Promise.all([0, 1].map(() => openStore({ databaseUrl: TEST_DATABASE_URL, dataDir, schema, poolSize: 4 })));
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      // Every write of a wallet row is counted by a trigger of the test's own.
      await client.query(`CREATE TABLE ${schema}.wallet_writes (at BIGINT)`);
      await client.query(`CREATE FUNCTION ${schema}.count_wallet_write() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO ${schema}.wallet_writes VALUES (1); RETURN NEW; END $$`);
      const [first, second] = stores;
      const owner = { kind: 'account', id: (await first.createAccount({ name: 'busy' })).id } as const;
      await first.addCredit(owner, 1_000_000n);
      await client.query(`CREATE TRIGGER count_wallet_write AFTER UPDATE ON ${schema}.wallets FOR EACH ROW EXECUTE FUNCTION ${schema}.count_wallet_write()`);
      const requests = 200;
      const expiresAt = Date.now() + MINUTE;
      const outcomes = await Promise.all(
        Array.from({ length: requests }, async (_, index) => {
          const instance = index % 2 === 0 ? first : second;
          const hold = await instance.reserve({ owner, amount: 1_000n, requestId: `req_${index}`, expiresAt });
          return instance.settle(hold!.id, 700n);
        }),
      );
      assert.equal(outcomes.filter((outcome) => outcome?.charged === 700n).length, requests);
      const writes = Number((await client.query(`SELECT count(*) FROM ${schema}.wallet_writes`)).rows[0].count);
      assert.ok(writes <= 12, `${writes} wallet-row writes for ${requests} requests on two instances`);
      assert.deepEqual(await first.getBalance(owner), { balance: 1_000_000n - 700n * BigInt(requests), reserved: 0n, available: 1_000_000n - 140_000n });
      const charges = (await first.listEntries(owner)).filter((entry) => entry.kind === 'charge');
      assert.deepEqual(new Set(charges.map((entry) => entry.requestId)).size, requests, 'each charge names its request');
    } finally {
      await client.end();
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  test("a claim records its owner's turn only while another owner waits, or when the record is over a second old", async () => {
    const schema = newSchema();
    const store = await openStore({ databaseUrl: TEST_DATABASE_URL, dataDir, schema, poolSize: 2 });
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const start = 1_800_000_000_000;
      let next = 0;
      const queue = async (owner: string) => {
        next += 1;
        const id = `resp_turn_${next}`;
        await store.createJob({
          id,
          kind: 'response',
          owner: { kind: 'account', id: owner },
          keyId: 'key_turns',
          status: 'queued',
          payload: null,
          result: null,
          reservationId: null,
          createdAt: start + next,
          expiresAt: start + 3_600_000,
        });
      };
      const claimAt = async (at: number) => (await store.claimJob('response', 'worker_turns', at, at + 30_000))?.owner.id;
      const turnOf = async (owner: string) =>
        (await client.query(`SELECT claimed_at FROM ${schema}.job_turns WHERE owner_id = $1`, [owner])).rows.map((row) => Number(row.claimed_at));

      for (let index = 0; index < 4; index++) await queue('acct_alone');
      assert.equal(await claimAt(start + 10), 'acct_alone');
      assert.deepEqual(await turnOf('acct_alone'), [start + 10], 'the first claim records the turn');
      assert.equal(await claimAt(start + 20), 'acct_alone');
      assert.deepEqual(await turnOf('acct_alone'), [start + 10], 'alone and recorded within the second: not written again');
      assert.equal(await claimAt(start + 1_020), 'acct_alone');
      assert.deepEqual(await turnOf('acct_alone'), [start + 1_020], 'a record over a second old is renewed');

      for (let index = 0; index < 4; index++) await queue('acct_other');
      // The owner with fewer jobs running goes first; while the other waits, each claim records its turn.
      for (const at of [start + 1_030, start + 1_040, start + 1_050]) {
        assert.equal(await claimAt(at), 'acct_other');
        assert.deepEqual(await turnOf('acct_other'), [at]);
      }
      // Three running each: the owner served longest ago goes, and its turn is recorded at once.
      assert.equal(await claimAt(start + 1_060), 'acct_alone');
      assert.deepEqual(await turnOf('acct_alone'), [start + 1_060], 'another owner had queued jobs when it was claimed');
    } finally {
      await client.end();
      await store.close();
    }
  });

  describe('credit leases', () => {
    const openLeased = (schema: string) => openStore({ databaseUrl: TEST_DATABASE_URL, dataDir, schema, poolSize: 4, leases: true });
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    /** The open slices of an owner (their rows), read beside the stores. */
    async function openSlices(client: pg.Client, schema: string, ownerId: string): Promise<bigint[]> {
      const { rows } = await client.query(`SELECT amount FROM ${schema}.reservations WHERE owner_id = $1 AND lease AND status = 'open'`, [ownerId]);
      return rows.map((row) => BigInt(row.amount));
    }

    /** Waits until the owner has no slice out (an idle slice goes back within IDLE_MS; no time is asserted). */
    async function slicesBack(client: pg.Client, schema: string, ownerId: string): Promise<void> {
      const deadline = Date.now() + 30_000;
      while ((await openSlices(client, schema, ownerId)).length > 0 && Date.now() < deadline) await sleep(20);
      assert.deepEqual(await openSlices(client, schema, ownerId), [], 'every slice came back');
    }

    /** Two instances with slices on a new schema, an owner on it, and a client beside them. */
    async function withTwoInstances(run: (context: { first: Store; second: Store; client: pg.Client; schema: string; owner: OwnerRef }) => Promise<void>) {
      const schema = newSchema();
      const [first, second] = await Promise.all([openLeased(schema), openLeased(schema)]);
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        const owner = { kind: 'account', id: (await first.createAccount({ name: 'leased' })).id } as const;
        await run({ first, second, client, schema, owner });
      } finally {
        await client.end();
        await Promise.all([first.close(), second.close()]);
      }
    }

    test("a busy wallet's holds are decided against the instance's slice: every charge written with its request, the slice back when idle", () =>
      withTwoInstances(async ({ first, second, client, schema, owner }) => {
        await first.addCredit(owner, 1_000_000_000n);
        const expiresAt = Date.now() + MINUTE;
        const ids: string[] = [];
        let charged = 0n;
        let sawSlice = false;
        // Waves of concurrent requests on both instances: the first ones are decided in the
        // database, and show the demand that the slices are then sized to.
        for (let wave = 0; wave < 12; wave++) {
          const outcomes = await Promise.all(
            Array.from({ length: 16 }, async (_, index) => {
              const instance = index % 2 === 0 ? first : second;
              const hold = (await instance.reserve({ owner, amount: 10_000n, requestId: `req_${wave}_${index}`, expiresAt }))!;
              ids.push(hold.id);
              assert.equal((await instance.getReservation(hold.id))?.status, 'open', 'the instance that made a hold finds it open');
              // Some cost more than their hold (capped), some nothing, some are released.
              if (index % 4 === 3) return (await instance.release(hold.id)) ? 'released' : 'not open';
              return instance.settle(hold.id, index % 4 === 2 ? 25_000n : BigInt(index * 100));
            }),
          );
          for (const [index, outcome] of outcomes.entries()) {
            if (index % 4 === 3) assert.equal(outcome, 'released');
            else
              assert.deepEqual(
                outcome,
                index % 4 === 2
                  ? { charged: 10_000n, released: 0n, shortfall: 15_000n }
                  : { charged: BigInt(index * 100), released: 10_000n - BigInt(index * 100), shortfall: 0n },
              );
            if (typeof outcome === 'object' && outcome !== null) charged += outcome.charged;
          }
          if ((await openSlices(client, schema, owner.id)).length > 0) sawSlice = true;
        }
        assert.ok(sawSlice, 'the busy wallet was lent out in slices');
        const { rows } = await client.query(`SELECT count(*) FROM ${schema}.reservations WHERE owner_id = $1 AND lease`, [owner.id]);
        assert.ok(Number(rows[0].count) >= 1);
        await slicesBack(client, schema, owner.id);
        const final = await assertLedgerConsistent(first, owner, ids);
        assert.equal(final.reserved, 0n);
        // Every charge names its request, once; together they are what the settlements returned.
        const charges = (await second.listEntries(owner)).filter((entry) => entry.kind === 'charge');
        assert.equal(new Set(charges.map((entry) => entry.requestId)).size, charges.length);
        assert.equal(1_000_000_000n - final.balance, charged);
        for (const id of ids) assert.notEqual((await second.getReservation(id))?.status, 'open', 'every hold is written closed');
      }));

    test("a lapsed instance's slice comes back with its holds; what it decided against the slice and had not written is uncharged", async () => {
      const schema = newSchema();
      const heartbeat = { lapseMs: 3_000 };
      const live = await openStore({ databaseUrl: TEST_DATABASE_URL, dataDir, schema, poolSize: 2, heartbeat });
      const proxy = await startProxy(new URL(TEST_DATABASE_URL));
      const lost = await openStore({ databaseUrl: proxy.url, dataDir, schema, poolSize: 4, heartbeat });
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        const owner = { kind: 'account', id: (await live.createAccount({ name: 'lapse' })).id } as const;
        await live.addCredit(owner, 1_000_000_000n);
        const expiresAt = Date.now() + 600_000;
        // Concurrent requests on the instance to be lost, settled: it takes a slice.
        for (let wave = 0; wave < 10 && (await openSlices(client, schema, owner.id)).length === 0; wave++) {
          await Promise.all(
            Array.from({ length: 8 }, async () => {
              const hold = (await lost.reserve({ owner, amount: 1_000_000n, requestId: null, expiresAt }))!;
              await lost.settle(hold.id, 400_000n);
            }),
          );
        }
        assert.equal((await openSlices(client, schema, owner.id)).length, 1, 'the busy instance holds a slice');
        // Holds decided against the slice, open when its instance is lost.
        const inSlice = await Promise.all(Array.from({ length: 3 }, () => lost.reserve({ owner, amount: 1_000_000n, requestId: null, expiresAt })));
        assert.ok(inSlice.every((hold) => hold !== null));
        const liveHold = (await live.reserve({ owner, amount: 5_000n, requestId: null, expiresAt }))!;
        const { rows } = await client.query(
          `SELECT coalesce(sum(amount), 0) AS charged FROM ${schema}.ledger_entries WHERE owner_id = $1 AND kind = 'charge'`,
          [owner.id],
        );
        const chargedBefore = BigInt(rows[0].charged);
        await proxy.shutDown();

        const deadline = Date.now() + 30_000;
        while ((await openSlices(client, schema, owner.id)).length > 0 && Date.now() < deadline) await sleep(50);
        assert.deepEqual(await openSlices(client, schema, owner.id), [], 'the slice was released with its instance');
        const balance = await live.getBalance(owner);
        assert.deepEqual(balance, { balance: 1_000_000_000n - chargedBefore, reserved: 5_000n, available: 1_000_000_000n - chargedBefore - 5_000n });
        assert.equal((await live.getReservation(liveHold.id))?.status, 'open', "the live instance's hold stays");
        for (const hold of inSlice) assert.equal(await live.getReservation(hold!.id), null, 'never written: uncharged');
      } finally {
        await client.end();
        await proxy.shutDown();
        await lost.close();
        await live.close();
      }
    });

    test('concurrent holds on two instances with slices out take exactly what the balance affords', () =>
      withTwoInstances(async ({ first, second, client, schema, owner }) => {
        const amount = 7_000_000n;
        const balance = 137n * amount + 3_333_333n;
        await first.addCredit(owner, balance);
        const expiresAt = Date.now() + MINUTE;
        // Both instances take slices: waves of small holds, released.
        const warm: string[] = [];
        for (let wave = 0; wave < 6; wave++) {
          await Promise.all(
            Array.from({ length: 12 }, async (_, index) => {
              const instance = index % 2 === 0 ? first : second;
              const hold = (await instance.reserve({ owner, amount: amount / 2n, requestId: null, expiresAt }))!;
              warm.push(hold.id);
              await instance.release(hold.id);
            }),
          );
        }
        assert.ok((await openSlices(client, schema, owner.id)).length > 0, 'slices are out');

        // Then more holds than the balance affords, at once: the credit in slices comes back to
        // whoever needs it.
        const results = await Promise.all(
          Array.from({ length: 300 }, (_, index) => (index % 2 === 0 ? first : second).reserve({ owner, amount, requestId: `req_${index}`, expiresAt })),
        );
        const reserved = results.filter((reservation) => reservation !== null);
        assert.equal(reserved.length, 137, 'exactly what the balance affords');
        const shown = await first.getBalance(owner);
        assert.equal(shown.balance, balance);
        assert.equal(shown.available, 3_333_333n, 'nothing stranded in a slice');

        await Promise.all(reserved.map((reservation, index) => (index % 2 === 0 ? first : second).settle(reservation.id, index % 3 === 0 ? amount : 1n)));
        await slicesBack(client, schema, owner.id);
        const final = await assertLedgerConsistent(first, owner, [...warm, ...reserved.map((reservation) => reservation.id)]);
        const charged = sum(reserved.map((_, index) => (index % 3 === 0 ? amount : 1n)));
        assert.deepEqual(final, { balance: balance - charged, reserved: 0n, available: balance - charged });
      }));
  });

  test('a lost database is reported as a retryable storage_unavailable, and idle losses are logged', async () => {
    const proxy = await startProxy(new URL(TEST_DATABASE_URL));
    try {
      const warnings: string[] = [];
      const logger = { debug() {}, info() {}, error() {}, warn: (_details: object, message: string) => void warnings.push(message) };
      const store = await openStore({ databaseUrl: proxy.url, dataDir, schema: contractSchema, poolSize: 1, logger });
      try {
        await store.currentVersion();
        await proxy.shutDown();
        await waitFor(() => warnings.includes('idle PostgreSQL connection failed'));
        await assert.rejects(
          store.currentVersion(),
          (error: unknown) => error instanceof GatewayError && error.status === 503 && error.code === 'storage_unavailable' && error.retryable,
        );
      } finally {
        await store.close();
      }
    } finally {
      await proxy.shutDown();
    }
  });
});

/** A loopback TCP relay to the database that the test can pull the plug on (idempotently). */
/** An account with `credit` pico-USD, made through `store`. */
async function fundedOwner(store: Store, name: string, credit: bigint): Promise<OwnerRef> {
  const owner = { kind: 'account', id: (await store.createAccount({ name })).id } as const;
  await store.addCredit(owner, credit);
  return owner;
}

/** Cuts the relay (a second shut-down does nothing), then closes the stores. */
async function closeAll(proxy: { shutDown(): Promise<void> }, stores: readonly Store[]): Promise<void> {
  await proxy.shutDown();
  for (const store of stores) await store.close();
}

/** A relay to the database at `target`; `url` is `target` reached through it. */
async function startProxy(target: URL): Promise<{ url: string; shutDown(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const [socket, peer] of [
      [client, upstream],
      [upstream, client],
    ]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => {
        sockets.delete(socket);
        peer.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: url.href,
    async shutDown() {
      const closed = server.listening ? new Promise((resolve) => server.close(resolve)) : undefined;
      const gone = [...sockets].map((socket) => new Promise((resolve) => socket.once('close', resolve)));
      for (const socket of sockets) socket.destroy();
      await Promise.all([closed, ...gone]);
    },
  };
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 5_000) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
