/**
 * The blob store contract (blob-contract.ts) on the folder store and on PostgreSQL, and what only the
 * folder store does (its layout, its temporary files).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
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

/**
 * A process that puts `size` bytes under `key` and dies (SIGKILL, as a crash would) once its write
 * has put `written` bytes of the file on disk: what a crash in the middle of an image's write leaves.
 */
async function crashWhileWriting(dataDir: string, key: string, size: number, written: number): Promise<void> {
  const script = `
    import { open } from 'node:fs/promises';
    import { createFileBlobStore } from ${JSON.stringify(new URL('../../src/storage/blobs.ts', import.meta.url).href)};
    const probe = await open(${JSON.stringify(join(dataDir, 'probe'))}, 'w');
    const fileHandle = Object.getPrototypeOf(probe);
    await probe.close();
    const writev = fileHandle.writev;
    fileHandle.writev = async function (chunks, position) {
      await writev.call(this, [Buffer.concat(chunks).subarray(0, ${written})], position);
      process.kill(process.pid, 'SIGKILL');
      await new Promise(() => {});
    };
    await createFileBlobStore(${JSON.stringify(dataDir)}).put(${JSON.stringify(key)}, new Uint8Array(${size}).fill(7), 'image/png');
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' });
  const [code, signal] = await once(child, 'exit');
  assert.deepEqual([code, signal], [null, 'SIGKILL']);
}

test('a new blob is written in place, and one cut short by a crash reads as no blob until a put replaces it or the sweep removes it', async () => {
  const dataDir = newFolder();
  const blobs = createFileBlobStore(dataDir);
  const path = join(dataDir, BLOB_FOLDER, 'files', 'b1', 'req_1.image-0.png');
  await blobs.put('files/b1/req_0.image-0.png', new Uint8Array([1, 2, 3]), 'image/png');
  // In place: the file under its own name, no temporary file beside it.
  assert.deepEqual(readdirSync(join(dataDir, BLOB_FOLDER, 'files', 'b1')), ['req_0.image-0.png']);

  // Cut in the body, and cut in the header line itself.
  await crashWhileWriting(dataDir, 'files/b1/req_1.image-0.png', 200_000, 70_000);
  await crashWhileWriting(dataDir, 'files/b1/req_2.image-0.png', 200_000, 5);
  assert.equal(statSync(path).size, 70_000, 'the crash left a partial file under the key');
  assert.equal(await blobs.get('files/b1/req_1.image-0.png'), null);
  assert.equal(await blobs.get('files/b1/req_2.image-0.png'), null);
  assert.deepEqual(
    (await blobs.list('files/b1/')).map((blob) => blob.key),
    ['files/b1/req_0.image-0.png'],
  );

  const image = new Uint8Array(200_000).fill(9);
  assert.equal((await blobs.put('files/b1/req_1.image-0.png', image, 'image/png')).size, 200_000);
  const blob = await blobs.get('files/b1/req_1.image-0.png');
  assert.equal(blob?.size, 200_000);
  assert.ok((await buffer(blob!.stream)).equals(image));
  assert.equal(readFileSync(path).subarray(0, 17).toString('latin1'), 'image/png\t200000\n');

  assert.equal(await blobs.sweep(Date.now() + 1, 10), 3);
  assert.deepEqual(readdirSync(join(dataDir, BLOB_FOLDER)), []);
});
