/**
 * The blob store contract (blob-contract.ts) on the folder store and on PostgreSQL, and what only the
 * folder store does (its layout, its temporary files).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { BLOB_FOLDER, createFileBlobStore } from '../../src/storage/blobs.ts';
import { openStore } from '../../src/storage/open-store.ts';
import type { Store } from '../../src/storage/store.ts';
import { dropSchemas, newSchemaName, TEST_DATABASE_URL } from '../helpers/postgres.ts';
import { blobContract } from './blob-contract.ts';

const folders: string[] = [];
const stores: Store[] = [];
const schemas: string[] = [];

after(async () => {
  for (const store of stores) await store.close();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  await dropSchemas(schemas);
});

function newFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'gateway-blobs-'));
  folders.push(folder);
  return folder;
}

blobContract('folder', async () => {
  const clock = { now: Date.now() };
  return { blobs: createFileBlobStore(newFolder(), () => clock.now), clock };
});

blobContract('postgres', async () => {
  const clock = { now: Date.now() };
  const schema = newSchemaName('test_blobs');
  schemas.push(schema);
  const store = await openStore({ databaseUrl: TEST_DATABASE_URL, dataDir: tmpdir(), schema, poolSize: 4, now: () => clock.now });
  stores.push(store);
  assert.ok(store.databaseBlobs);
  return { blobs: store.databaseBlobs, clock };
});

test('folder blobs live under <dataDir>/blobs, private to the server, and leave no temporary files', async () => {
  const dataDir = newFolder();
  const blobs = createFileBlobStore(dataDir);
  await blobs.put('layout/a.bin', new Uint8Array([7]), 'application/octet-stream');
  assert.deepEqual(readdirSync(join(dataDir, BLOB_FOLDER, 'layout')), ['a.bin']);
  assert.equal(statSync(join(dataDir, BLOB_FOLDER, 'layout', 'a.bin')).mode & 0o777, 0o600);
  async function* failing(): AsyncGenerator<Uint8Array> {
    yield new Uint8Array([1]);
    throw new Error('broken');
  }
  await assert.rejects(blobs.put('layout/b.bin', failing(), 'application/octet-stream'));
  assert.deepEqual(readdirSync(join(dataDir, BLOB_FOLDER, 'layout')), ['a.bin']);
  // A swept request's folder goes with its last file.
  assert.equal(await blobs.sweep(Date.now() + 1, 10), 1);
  assert.deepEqual(readdirSync(join(dataDir, BLOB_FOLDER)), []);
});
