import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, openSync, readdirSync, readlinkSync, readSync, closeSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { timeOrderedId } from '../../src/core/ids.ts';
import { REQUEST_LOG_LIFETIME_MS, requestLogRecord } from '../../src/pipeline/request-log.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { GROUP_COMMIT_MS, openSqliteDatabase } from '../../src/storage/sqlite/database.ts';
import { EXPIRY_BATCH_ROWS } from '../../src/storage/sqlite/expiry.ts';
import { openSqliteStore } from '../../src/storage/sqlite/store.ts';
import { WRITE_OPEN_AFTER_MS } from '../../src/storage/sqlite/wallet-book.ts';
import { SQLITE_MIGRATIONS } from '../../src/storage/migrations/sqlite.ts';
import { openStore, SQLITE_FILE_NAME } from '../../src/storage/open-store.ts';
import { storeContract } from './contract.ts';
import { assertLedgerConsistent } from './contract/context.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'gateway-sqlite-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

storeContract(
  'sqlite',
  () => openStore({ dataDir }),
  () => {
    const freshDir = mkdtempSync(join(dataDir, 'fresh-'));
    return () => openStore({ dataDir: freshDir });
  },
);

describe('sqlite specifics', () => {
  test('the file lives in the data dir, in WAL mode, with each migration recorded once', async () => {
    const store = await openStore({ dataDir });
    await store.close();
    const reopened = await openStore({ dataDir });
    await reopened.close();
    const db = new DatabaseSync(join(dataDir, SQLITE_FILE_NAME), { readOnly: true });
    try {
      assert.equal(db.prepare('PRAGMA journal_mode').get()?.journal_mode, 'wal');
      const versions = db
        .prepare('SELECT version FROM schema_migrations ORDER BY version')
        .all()
        .map((row) => row.version);
      assert.deepEqual(
        versions,
        SQLITE_MIGRATIONS.map((migration) => migration.version),
      );
    } finally {
      db.close();
    }
  });

  test("a group's savepoints journal in memory: no unit spills its journal to a temporary file", async () => {
    // Each unit of a group is a savepoint. By default SQLite moves a savepoint's journal past 64 KiB
    // to a temporary file, and keeps using that file for every later unit of the connection: a
    // write of each page a unit touches, before the WAL's own.
    const database = openSqliteDatabase(join(dataDir, 'savepoints.sqlite'));
    try {
      const body = 'x'.repeat(3000);
      database.transaction(() => {
        database.prepare('CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT)').run();
        const insert = database.prepare('INSERT INTO rows (body) VALUES (?)');
        for (let index = 0; index < 100; index++) insert.run(body);
      });
      // One unit that changes every page (about 400 KB of journal), then small ones.
      await database.grouped(() => database.prepare('UPDATE rows SET body = upper(body)').run());
      const touch = database.prepare('UPDATE rows SET body = ? WHERE id = ?');
      await Promise.all(Array.from({ length: 20 }, (_, index) => database.grouped(() => touch.run(`${index}${body}`, index + 1))));
      const temporaryFiles = readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).includes('etilqs_');
        } catch {
          return false;
        }
      });
      assert.deepEqual(temporaryFiles, []);
      database.flush();
      assert.equal(database.prepare("SELECT count(*) AS count FROM rows WHERE body LIKE 'X%'").get()?.count, 80);
    } finally {
      database.close();
    }
  });

  test('a missing data dir is created; an in-memory store needs no files', async () => {
    const nested = join(dataDir, 'nested', 'deeper');
    const store = await openStore({ dataDir: nested });
    assert.equal(store.engine, 'sqlite');
    await store.close();
    const memory = await openStore({ dataDir: nested, sqliteFile: ':memory:' });
    await memory.createOrganization({ name: 'ephemeral' });
    assert.equal((await memory.listOrganizations()).length, 1);
    await memory.close();
  });

  test('opening job kinds rebuilds the jobs table in place: its rows and indexes kept, any kind then stored', async () => {
    const dir = join(dataDir, 'open-kinds');
    mkdirSync(dir);
    const opening = SQLITE_MIGRATIONS.find((migration) => migration.name === 'open job kinds')!;
    const db = new DatabaseSync(join(dir, SQLITE_FILE_NAME));
    db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT');
    for (const migration of SQLITE_MIGRATIONS.filter((migration) => migration.version < opening.version)) {
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0)').run(migration.version, migration.name);
    }
    db.prepare(
      `INSERT INTO jobs (id, kind, owner_kind, owner_id, key_id, status, payload, result, created_at, updated_at, expires_at, checkpoint, next_attempt_at)
       VALUES ('video_before', 'video', 'account', 'acct_1', 'key_1', 'in_progress', '{"a":1}', '{"b":2}', 1, 2, 3, '{"c":3}', 4)`,
    ).run();
    const indexesOf = (database: DatabaseSync) =>
      database
        .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'jobs' ORDER BY name")
        .all()
        .map((row) => ({ name: row.name, sql: row.sql }));
    const indexes = indexesOf(db);
    // The rebuild itself, as the migration runs it: the table's indexes come back as they were (later
    // migrations may change them: the store opened below applies those).
    db.exec('BEGIN');
    db.exec(opening.sql);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0)').run(opening.version, opening.name);
    db.exec('COMMIT');
    assert.deepEqual(indexesOf(db), indexes);
    db.close();

    const store = await openStore({ dataDir: dir });
    try {
      const kept = await store.getJob('video_before');
      assert.deepEqual(
        [kept?.kind, kept?.status, kept?.payload, kept?.result, kept?.checkpoint, kept?.nextAttemptAt],
        ['video', 'in_progress', { a: 1 }, { b: 2 }, { c: 3 }, 4],
      );
      const other = await store.createJob({
        id: 'batch_after',
        kind: 'batch',
        owner: { kind: 'account', id: 'acct_1' },
        keyId: 'key_1',
        status: 'queued',
        payload: null,
        result: null,
        reservationId: null,
        createdAt: 5,
        expiresAt: 6,
      });
      assert.equal(other.kind, 'batch');
    } finally {
      await store.close();
    }
    const upgraded = new DatabaseSync(join(dir, SQLITE_FILE_NAME), { readOnly: true });
    try {
      assert.equal(upgraded.prepare('PRAGMA integrity_check').get()?.integrity_check, 'ok');
      assert.deepEqual(upgraded.prepare('PRAGMA foreign_key_check').all(), []);
    } finally {
      upgraded.close();
    }
  });

  test('a database from a newer build is refused', async () => {
    const dir = join(dataDir, 'newer');
    await (await openStore({ dataDir: dir })).close();
    const db = new DatabaseSync(join(dir, SQLITE_FILE_NAME));
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'future', 0)").run();
    db.close();
    await assert.rejects(openStore({ dataDir: dir }), /newer than this build supports/);
  });

  test('the ledger decides in memory and writes behind: a closed reservation within a group, an open one once it has aged', async () => {
    const dir = join(dataDir, 'grouped');
    const store = await openStore({ dataDir: dir });
    const account = await store.createAccount({ name: 'grouped' });
    const owner = { kind: 'account', id: account.id } as const;
    await store.addCredit(owner, 1_000n);
    const other = new DatabaseSync(join(dir, SQLITE_FILE_NAME), { readOnly: true });
    const reservationRows = other.prepare('SELECT status, count(*) AS n FROM reservations GROUP BY status ORDER BY status');
    const walletRow = other.prepare('SELECT balance, reserved FROM wallets WHERE owner_id = ?');
    try {
      const settled = await store.reserve({ owner, amount: 400n, requestId: null, expiresAt: Date.now() + 60_000 });
      assert.ok(settled);
      assert.equal((await store.getBalance(owner)).reserved, 400n, 'the writer sees its own reservation at once');
      assert.deepEqual(reservationRows.all(), [], 'nothing written yet');
      await store.settle(settled.id, 150n);
      await sleep(GROUP_COMMIT_MS * 10);
      assert.deepEqual(
        reservationRows.all().map((row) => ({ ...row })),
        [{ status: 'settled', n: 1 }],
        'written once, closed, by the group timer',
      );
      assert.deepEqual({ ...walletRow.get(account.id) }, { balance: 850, reserved: 0 });

      const held = await store.reserve({ owner, amount: 300n, requestId: null, expiresAt: Date.now() + 60_000 });
      assert.ok(held);
      const deadline = Date.now() + WRITE_OPEN_AFTER_MS + 5_000;
      while (reservationRows.all().length < 2 && Date.now() < deadline) await sleep(50);
      assert.deepEqual(
        reservationRows.all().map((row) => ({ ...row })),
        [
          { status: 'open', n: 1 },
          { status: 'settled', n: 1 },
        ],
        'an aged reservation is written open',
      );
      assert.deepEqual({ ...walletRow.get(account.id) }, { balance: 850, reserved: 300 }, 'with its hold on the wallet row');
      await store.release(held.id);
      await store.close();
      assert.deepEqual(
        reservationRows.all().map((row) => ({ ...row })),
        [
          { status: 'released', n: 1 },
          { status: 'settled', n: 1 },
        ],
        'close writes what is pending',
      );
      assert.deepEqual({ ...walletRow.get(account.id) }, { balance: 850, reserved: 0 });
    } finally {
      other.close();
    }
  });

  /** A store in its own directory with one account holding `credit`. */
  async function fundedAccount(name: string, credit: bigint) {
    const dir = join(dataDir, name);
    const store = await openStore({ dataDir: dir });
    const account = await store.createAccount({ name });
    const owner = { kind: 'account', id: account.id } as const;
    await store.addCredit(owner, credit);
    const reserve = (amount: bigint) => store.reserve({ owner, amount, requestId: null, expiresAt: Date.now() + 60_000 });
    // The `gateway credit` command in another process: its own connection, its own commit.
    const creditElsewhere = (amount: number) => {
      const cli = new DatabaseSync(join(dir, SQLITE_FILE_NAME), { timeout: 5_000 });
      try {
        cli.prepare('UPDATE wallets SET balance = balance + ? WHERE owner_id = ?').run(amount, account.id);
      } finally {
        cli.close();
      }
    };
    return { store, owner, reserve, creditElsewhere };
  }

  /** Polls until `found` returns something other than null (or five seconds pass). */
  async function eventually<T>(found: () => Promise<T | null>): Promise<T | null> {
    const deadline = Date.now() + 5_000;
    let value = await found();
    while (value === null && Date.now() < deadline) {
      await sleep(20);
      value = await found();
    }
    return value;
  }

  test('a credit from another process reaches the balance the server holds in memory', async () => {
    const { store, owner, reserve, creditElsewhere } = await fundedAccount('credited elsewhere', 100n);
    assert.ok(await reserve(100n));
    assert.equal(await reserve(50n), null);
    creditElsewhere(500);
    assert.ok(await eventually(() => reserve(50n)), 'the credit became available');
    assert.deepEqual(await store.getBalance(owner), { balance: 600n, reserved: 150n, available: 450n });
    await store.close();
  });

  test('a wallet kept in memory between requests, with no hold open, also sees a credit from another process', async () => {
    const { store, owner, reserve, creditElsewhere } = await fundedAccount('idle between requests', 100n);
    const first = await reserve(100n);
    assert.ok(first);
    await store.settle(first.id, 100n);
    await sleep(GROUP_COMMIT_MS * 10);
    assert.equal(await reserve(1n), null, 'spent');
    creditElsewhere(70);
    const balance = await eventually(async () => {
      const current = await store.getBalance(owner);
      return current.balance === 0n ? null : current;
    });
    assert.deepEqual(balance, { balance: 70n, reserved: 0n, available: 70n });
    assert.ok(await reserve(70n));
    await store.close();
  });

  test('one server per file: a second server process is refused while the first holds the file', async () => {
    const dir = join(dataDir, 'server-lock');
    const first = await openStore({ dataDir: dir, exclusiveServer: true });
    try {
      await assert.rejects(openStore({ dataDir: dir, exclusiveServer: true }), /another gateway server is already running/);
      const command = await openStore({ dataDir: dir });
      await command.createOrganization({ name: 'the command line still works' });
      await command.close();
    } finally {
      await first.close();
    }
    const next = await openStore({ dataDir: dir, exclusiveServer: true });
    await next.close();
  });

  test('a server taking the file releases the holds its predecessor left open; the command line does not', async () => {
    const dir = join(dataDir, 'predecessor');
    let clock = Date.now();
    const now = () => clock;
    const first = await openStore({ dataDir: dir, exclusiveServer: true, now });
    const account = await first.createAccount({ name: 'predecessor' });
    const owner = { kind: 'account', id: account.id } as const;
    await first.addCredit(owner, 1_000n);
    const held = (await first.reserve({ owner, amount: 300n, requestId: null, expiresAt: clock + 600_000 }))!;
    clock += WRITE_OPEN_AFTER_MS;
    const settled = (await first.reserve({ owner, amount: 200n, requestId: null, expiresAt: clock + 600_000 }))!;
    await first.settle(settled.id, 50n);
    await first.listEntries(owner); // writes what is pending: the aged hold as open, on the wallet row
    // The process ends with the hold open (as a crash would: nothing closes it on the way out).
    await first.close();

    const command = await openStore({ dataDir: dir, now });
    assert.deepEqual(await command.getBalance(owner), { balance: 950n, reserved: 300n, available: 650n }, 'held while no server runs');
    await command.close();

    const next = await openStore({ dataDir: dir, exclusiveServer: true, now });
    try {
      assert.deepEqual(await next.getBalance(owner), { balance: 950n, reserved: 0n, available: 950n });
      assert.equal((await next.getReservation(held.id))?.status, 'released');
      assert.equal(await next.settle(held.id, 10n), null, 'a released hold cannot be charged');
      const mine = (await next.reserve({ owner, amount: 950n, requestId: null, expiresAt: clock + 600_000 }))!;
      assert.deepEqual(mine.holder, { kind: 'instance', id: next.instanceId });
      assert.notEqual(next.instanceId, first.instanceId);
      await assertLedgerConsistent(next, owner, [held.id, settled.id, mine.id]);
    } finally {
      await next.close();
    }
  });

  test('two handles in one process share the connection and see each other at once', async () => {
    const dir = join(dataDir, 'shared');
    const first = await openStore({ dataDir: dir });
    const second = await openStore({ dataDir: dir });
    const account = await first.createAccount({ name: 'shared' });
    const owner = { kind: 'account', id: account.id } as const;
    await first.addCredit(owner, 500n);
    const held = await first.reserve({ owner, amount: 300n, requestId: null, expiresAt: Date.now() + 60_000 });
    assert.ok(held);
    assert.equal(await second.reserve({ owner, amount: 300n, requestId: null, expiresAt: Date.now() + 60_000 }), null);
    await first.close();
    assert.equal((await second.getBalance(owner)).reserved, 300n, 'closing one handle leaves the other working');
    await second.close();
  });

  test('background checkpoints move the WAL into the database file without a commit doing it', async () => {
    const dir = join(dataDir, 'checkpoints');
    const store = await openStore({ dataDir: dir, backgroundCheckpoints: true });
    const file = join(dir, SQLITE_FILE_NAME);
    const sizeBefore = statSync(file).size;
    for (let index = 0; index < 300; index += 1) await store.createOrganization({ name: `org-${index}-${'x'.repeat(200)}` });
    const deadline = Date.now() + 10_000;
    while (statSync(file).size === sizeBefore && Date.now() < deadline) await sleep(50);
    assert.ok(statSync(file).size > sizeBefore, 'the worker checkpointed');
    await store.close();
  });

  test('expired rows are deleted a batch at a time, with the event loop free between batches', async () => {
    const store = await openSqliteStore({ file: join(dataDir, 'expiry.sqlite'), logger: silentLogger, now: Date.now });
    try {
      const account = await store.createAccount({ name: 'expiring' });
      const owner = { kind: 'account', id: account.id } as const;
      const rows = Array.from({ length: 2 * EXPIRY_BATCH_ROWS + 500 }, (_, index) =>
        requestLogRecord({
          requestId: timeOrderedId('req'),
          owner,
          keyId: 'key_x',
          route: 'chat',
          stream: false,
          createdAt: index,
          durationMs: 1,
          status: 'completed',
          httpStatus: 200,
        }),
      );
      const kept = requestLogRecord({
        requestId: timeOrderedId('req'),
        owner,
        keyId: 'key_x',
        route: 'chat',
        stream: false,
        createdAt: Date.now(),
        durationMs: 1,
        status: 'completed',
        httpStatus: 200,
      });
      await store.recordRequests([...rows, kept]);
      let interleaved = false;
      let interleavedBeforeTheEnd = false;
      const deletion = store.deleteExpiredRequests(REQUEST_LOG_LIFETIME_MS + rows.length).then((count) => {
        interleavedBeforeTheEnd = interleaved;
        return count;
      });
      setImmediate(() => (interleaved = true));
      assert.equal(await deletion, rows.length);
      assert.ok(interleavedBeforeTheEnd, 'other work ran while the deletion went on');
      assert.equal(await store.getRequest(rows.at(-1)!.id), null);
      assert.equal((await store.getRequest(kept.id))?.id, kept.id);
    } finally {
      await store.close();
    }
  });

  test('while writes are held, grouped units wait and nothing commits; the release runs and commits them', async () => {
    const file = join(dataDir, 'hold.sqlite');
    const database = openSqliteDatabase(file);
    const reader = () => new DatabaseSync(file, { readOnly: true });
    try {
      database.exec('CREATE TABLE marks (mark TEXT)');
      const insert = database.prepare('INSERT INTO marks (mark) VALUES (?)');
      await database.grouped(() => insert.run('before'));
      database.holdWrites();
      let ran = false;
      const waiting = database.grouped(() => {
        ran = true;
        return insert.run('during');
      });
      await sleep(4 * GROUP_COMMIT_MS);
      assert.equal(ran, false, 'the unit waits for the release');
      const outside = reader();
      assert.deepEqual(
        outside
          .prepare('SELECT mark FROM marks')
          .all()
          .map((row) => row.mark),
        ['before'],
        'the hold committed what was open',
      );
      database.releaseWrites();
      await waiting;
      await sleep(4 * GROUP_COMMIT_MS);
      assert.deepEqual(
        outside
          .prepare('SELECT mark FROM marks ORDER BY rowid')
          .all()
          .map((row) => row.mark),
        ['before', 'during'],
      );
      outside.close();
    } finally {
      database.close();
    }
  });

  test('a reader on another connection waits for the open group to commit on its own, forcing no commit, and a rolled-back group ends its wait too', async () => {
    const file = join(dataDir, 'committed.sqlite');
    const database = openSqliteDatabase(file);
    const outside = new DatabaseSync(file, { readOnly: true });
    const marks = () => outside.prepare('SELECT count(*) AS n FROM marks').get()!.n;
    try {
      database.exec('CREATE TABLE marks (mark TEXT)');
      await database.committed();
      const insert = database.prepare('INSERT INTO marks (mark) VALUES (?)');
      await database.grouped(() => insert.run('grouped'));
      let ended = false;
      const waiting = database.committed().then(() => (ended = true));
      assert.equal(marks(), 0, 'asking committed nothing');
      assert.equal(ended, false);
      await waiting;
      assert.equal(marks(), 1, 'the group committed before the wait ended');
      // A group that fails at its commit is rolled back: the wait ends all the same.
      const failing = {
        write: () => {
          insert.run('lost');
          database.exec('INSERT INTO no_such_table VALUES (1)');
        },
        lost: () => {},
      };
      database.deferWrites(failing);
      const rolledBack = database.committed();
      assert.throws(() => database.flush());
      await rolledBack;
      assert.equal(marks(), 1);
    } finally {
      outside.close();
      database.close();
    }
  });

  test('writes are not held for a rewind while a reader still reads an older state, and are once it has ended', async () => {
    const file = join(dataDir, 'pinned.sqlite');
    let holds = 0;
    const store = await openSqliteStore({
      file,
      logger: silentLogger,
      now: Date.now,
      backgroundCheckpoints: true,
      checkpoints: { intervalMs: 20, rewindFrames: 200, onHold: () => (holds += 1) },
    });
    const reader = new DatabaseSync(file, { readOnly: true });
    try {
      const account = await store.createAccount({ name: 'pinned' });
      const write = () => {
        const facts = {
          requestId: timeOrderedId('req'),
          owner: { kind: 'account', id: account.id },
          keyId: 'key_pinned',
          route: 'chat',
          stream: false,
        } as const;
        return store.recordRequests([
          requestLogRecord({ ...facts, createdAt: Date.now(), durationMs: 1, status: 'completed', httpStatus: 200, output: { text: 'x'.repeat(4_000) } }),
        ]);
      };
      await write();
      await sleep(2 * GROUP_COMMIT_MS);
      // A read transaction (the dashboard's, say) keeps the state it began on.
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM request_log').get();
      const frames = () => Math.floor(statSync(`${file}-wal`).size / (4_096 + 24));
      // Past the rewind size and below four times it, with checkpoints running all along.
      while (frames() < 400) {
        await write();
        await sleep(GROUP_COMMIT_MS);
      }
      await sleep(200);
      assert.equal(holds, 0, 'no write was held for a checkpoint the reader kept from rewinding');
      reader.exec('COMMIT');
      const deadline = Date.now() + 30_000;
      while (holds === 0 && Date.now() < deadline) {
        await write();
        await sleep(GROUP_COMMIT_MS);
      }
      assert.ok(holds > 0, 'with the reader gone, the WAL is rewound');
    } finally {
      reader.close();
      await store.close();
    }
  });

  test('under steady writes, the WAL is rewound after checkpoints instead of growing with every frame', async () => {
    const file = join(dataDir, 'rewind.sqlite');
    const store = await openSqliteStore({
      file,
      logger: silentLogger,
      now: Date.now,
      backgroundCheckpoints: true,
      checkpoints: { intervalMs: 40, rewindFrames: 1 },
    });
    try {
      const account = await store.createAccount({ name: 'steady' });
      const output = { text: 'x'.repeat(1_000) };
      const written: string[] = [];
      // The first row creates the WAL; its header's first salt goes up by one at every rewind.
      const write = () => {
        const id = timeOrderedId('req');
        written.push(id);
        const facts = { requestId: id, owner: { kind: 'account', id: account.id }, keyId: 'key_steady', route: 'chat', stream: false } as const;
        return store.recordRequests([requestLogRecord({ ...facts, createdAt: Date.now(), durationMs: 1, status: 'completed', httpStatus: 200, output })]);
      };
      await write();
      await sleep(2 * GROUP_COMMIT_MS);
      const saltBefore = walSalt(`${file}-wal`);
      // Commits every few milliseconds, never a quiet moment of their own, until the WAL was rewound
      // three times (within a bound generous enough for a busy machine).
      const rewinds = () => (walSalt(`${file}-wal`) - saltBefore) >>> 0;
      const deadline = Date.now() + 30_000;
      while (rewinds() < 3 && Date.now() < deadline) {
        await write();
        await sleep(2);
      }
      assert.ok(rewinds() >= 3, `the WAL was rewound ${rewinds()} times`);
      // Nothing written was lost on the way.
      for (const id of [written[0], written[Math.floor(written.length / 2)], written.at(-1)!]) {
        assert.equal((await store.getRequest(id))?.id, id);
      }
    } finally {
      await store.close();
    }
  });
});

/** The first salt of a WAL file's header (bytes 16–19, big-endian), which SQLite increments at each rewind. */
function walSalt(walFile: string): number {
  const header = Buffer.alloc(32);
  const fd = openSync(walFile, 'r');
  try {
    readSync(fd, header, 0, 32, 0);
  } finally {
    closeSync(fd);
  }
  return header.readUInt32BE(16);
}
