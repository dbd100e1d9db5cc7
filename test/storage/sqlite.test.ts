import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { GROUP_COMMIT_MS } from '../../src/storage/sqlite/database.ts';
import { SQLITE_MIGRATIONS } from '../../src/storage/migrations/sqlite.ts';
import { openStore, SQLITE_FILE_NAME } from '../../src/storage/open-store.ts';
import { storeContract } from './contract.ts';

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
      const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all().map((row) => row.version);
      assert.deepEqual(versions, SQLITE_MIGRATIONS.map((migration) => migration.version));
    } finally {
      db.close();
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

  test('a database from a newer build is refused', async () => {
    const dir = join(dataDir, 'newer');
    await (await openStore({ dataDir: dir })).close();
    const db = new DatabaseSync(join(dir, SQLITE_FILE_NAME));
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'future', 0)").run();
    db.close();
    await assert.rejects(openStore({ dataDir: dir }), /newer than this build supports/);
  });

  test('grouped writes are visible to the writer at once and to other connections within the group window', async () => {
    const dir = join(dataDir, 'grouped');
    const store = await openStore({ dataDir: dir });
    const account = await store.createAccount({ name: 'grouped' });
    const owner = { kind: 'account', id: account.id } as const;
    await store.addCredit(owner, 1_000n);
    const other = new DatabaseSync(join(dir, SQLITE_FILE_NAME), { readOnly: true });
    const openReservations = other.prepare("SELECT count(*) AS n FROM reservations WHERE status = 'open'");
    try {
      const reservation = await store.reserve({ owner, amount: 400n, requestId: null, expiresAt: Date.now() + 60_000 });
      assert.ok(reservation);
      assert.equal((await store.getBalance(owner)).reserved, 400n, 'the writer sees its own group');
      assert.equal(openReservations.get()?.n, 0, 'not committed yet');
      await sleep(GROUP_COMMIT_MS * 10);
      assert.equal(openReservations.get()?.n, 1, 'committed by the group timer');
      await store.release(reservation.id);
      await store.close();
      assert.equal(openReservations.get()?.n, 0, 'close commits the open group');
    } finally {
      other.close();
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
});
