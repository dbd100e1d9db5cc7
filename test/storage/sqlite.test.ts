import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { SQLITE_MIGRATIONS } from '../../src/storage/migrations/sqlite.ts';
import { openStore, SQLITE_FILE_NAME } from '../../src/storage/open-store.ts';
import { storeContract } from './contract.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'gateway-sqlite-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

storeContract('sqlite', () => openStore({ dataDir }));

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
});
