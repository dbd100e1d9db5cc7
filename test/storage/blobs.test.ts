import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { GatewayError } from '../../src/core/errors.ts';
import { BLOB_FOLDER, createFileBlobStore, isSafeBlobKey } from '../../src/storage/blobs.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'gateway-blobs-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));
const blobs = createFileBlobStore(dataDir);

test('blobs round-trip their bytes and content type', async () => {
  const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0a, 0x00, 0xff]);
  await blobs.put('outputs/req_1/0.png', bytes, 'image/png');
  const stored = await blobs.get('outputs/req_1/0.png');
  assert.equal(stored?.contentType, 'image/png');
  assert.deepEqual(Buffer.from(stored!.bytes), Buffer.from(bytes));

  await blobs.put('outputs/req_1/0.png', new Uint8Array([1]), 'application/octet-stream');
  const replaced = await blobs.get('outputs/req_1/0.png');
  assert.deepEqual([replaced?.contentType, [...replaced!.bytes]], ['application/octet-stream', [1]]);

  await blobs.put('empty.bin', new Uint8Array(), 'video/mp4; codecs="avc1"');
  assert.deepEqual(await blobs.get('empty.bin'), { contentType: 'video/mp4; codecs="avc1"', bytes: new Uint8Array() });
});

test('missing blobs read as null and delete quietly', async () => {
  assert.equal(await blobs.get('outputs/none.png'), null);
  assert.equal(await blobs.get('empty.bin/below'), null);
  await blobs.put('gone.txt', new Uint8Array([1, 2]), 'text/plain');
  await blobs.delete('gone.txt');
  assert.equal(await blobs.get('gone.txt'), null);
  await blobs.delete('gone.txt');
});

test('blobs live under <dataDir>/blobs and leave no temporary files', async () => {
  await blobs.put('layout/a.bin', new Uint8Array([7]), 'application/octet-stream');
  assert.deepEqual(readdirSync(join(dataDir, BLOB_FOLDER, 'layout')), ['a.bin']);
});

test('unsafe keys and content types are rejected', async () => {
  for (const key of ['', '../escape', 'a/../../b', '/etc/passwd', 'a//b', 'a/./b', '.hidden', 'a\\b', 'a/', 'x'.repeat(600)]) {
    assert.equal(isSafeBlobKey(key), false, key);
    await assert.rejects(blobs.put(key, new Uint8Array([1]), 'text/plain'), GatewayError, key);
    await assert.rejects(blobs.get(key), GatewayError, key);
    await assert.rejects(blobs.delete(key), GatewayError, key);
  }
  await assert.rejects(blobs.put('ok.txt', new Uint8Array([1]), 'text/plain\nx'), GatewayError);
  await assert.rejects(blobs.put('ok.txt', new Uint8Array([1]), ''), GatewayError);
  assert.equal(isSafeBlobKey('outputs/req_00t4/image-0.webp'), true);
});
