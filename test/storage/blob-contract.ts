/**
 * The blob store contract (src/storage/blobs.ts), run on every implementation: the folder store
 * (blobs.test.ts) and PostgreSQL's (blobs.test.ts). Each suite gets a store of its own and a clock it
 * moves itself.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, test } from 'node:test';
import { GatewayError } from '../../src/core/errors.ts';
import { type BlobStore, isSafeBlobKey } from '../../src/storage/blobs.ts';

export interface BlobContractTarget {
  readonly blobs: BlobStore;
  /** The store's clock: tests set `clock.now`. */
  readonly clock: { now: number };
}

async function read(blobs: BlobStore, key: string): Promise<{ contentType: string; size: number; bytes: Buffer } | null> {
  const blob = await blobs.get(key);
  if (blob === null) return null;
  return { contentType: blob.contentType, size: blob.size, bytes: await buffer(blob.stream) };
}

/** `total` deterministic bytes in pieces of irregular sizes, produced one at a time. */
async function* pieces(total: number): AsyncGenerator<Uint8Array> {
  let offset = 0;
  let step = 1;
  while (offset < total) {
    const size = Math.min(total - offset, step);
    const piece = new Uint8Array(size);
    for (let i = 0; i < size; i++) piece[i] = (offset + i) % 251;
    offset += size;
    step = (step * 7 + 13) % 400_000;
    yield piece;
  }
}

function expected(total: number): Buffer {
  const bytes = Buffer.alloc(total);
  for (let i = 0; i < total; i++) bytes[i] = i % 251;
  return bytes;
}

export function blobContract(name: string, open: () => Promise<BlobContractTarget>): void {
  describe(`blob store contract: ${name}`, () => {
    test('bytes round-trip with their content type and size', async () => {
      const { blobs } = await open();
      const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0a, 0x00, 0xff]);
      const info = await blobs.put('outputs/req_1/0.png', bytes, 'image/png');
      assert.deepEqual([info.key, info.size, info.contentType], ['outputs/req_1/0.png', 7, 'image/png']);
      assert.deepEqual(await read(blobs, 'outputs/req_1/0.png'), { contentType: 'image/png', size: 7, bytes: Buffer.from(bytes) });

      await blobs.put('outputs/req_1/0.png', new Uint8Array([1]), 'application/octet-stream');
      assert.deepEqual(await read(blobs, 'outputs/req_1/0.png'), { contentType: 'application/octet-stream', size: 1, bytes: Buffer.from([1]) });

      await blobs.put('empty.bin', new Uint8Array(), 'video/mp4; codecs="avc1"');
      assert.deepEqual(await read(blobs, 'empty.bin'), { contentType: 'video/mp4; codecs="avc1"', size: 0, bytes: Buffer.alloc(0) });
    });

    test('a large blob is written from a stream and read as one', async () => {
      const { blobs } = await open();
      const total = 3 * 1024 * 1024 + 17;
      const info = await blobs.put('outputs/req_big/video.mp4', Readable.from(pieces(total)), 'video/mp4');
      assert.equal(info.size, total);
      const blob = await blobs.get('outputs/req_big/video.mp4');
      assert.equal(blob?.size, total);
      let chunks = 0;
      const received: Buffer[] = [];
      for await (const chunk of blob!.stream) {
        chunks++;
        received.push(chunk as Buffer);
      }
      assert.ok(chunks > 1, 'read in more than one chunk');
      assert.ok(Buffer.concat(received).equals(expected(total)));
    });

    test('a put whose source fails stores nothing and keeps the blob it would have replaced', async () => {
      const { blobs } = await open();
      await blobs.put('outputs/req_fail/a.txt', Buffer.from('kept'), 'text/plain');
      async function* failing(): AsyncGenerator<Uint8Array> {
        yield new Uint8Array(300_000);
        throw new Error('the source broke');
      }
      await assert.rejects(blobs.put('outputs/req_fail/a.txt', failing(), 'text/plain'), /the source broke/);
      await assert.rejects(blobs.put('outputs/req_fail/b.txt', failing(), 'text/plain'), /the source broke/);
      assert.equal((await read(blobs, 'outputs/req_fail/a.txt'))?.bytes.toString(), 'kept');
      assert.deepEqual(
        (await blobs.list('outputs/req_fail/')).map((blob) => blob.key),
        ['outputs/req_fail/a.txt'],
      );
    });

    test('a blob replaced while it is read is never read as a mix of the two', async () => {
      const { blobs } = await open();
      const size = 2 * 1024 * 1024;
      await blobs.put('outputs/req_swap/x.bin', Buffer.alloc(size, 'a'), 'application/octet-stream');
      const blob = await blobs.get('outputs/req_swap/x.bin');
      const received: Buffer[] = [];
      let replaced = false;
      const reading = (async () => {
        for await (const chunk of blob!.stream) {
          received.push(chunk as Buffer);
          if (!replaced) {
            replaced = true;
            await blobs.put('outputs/req_swap/x.bin', Buffer.alloc(size, 'b'), 'text/plain');
          }
        }
      })();
      // The old bytes whole, or an error: never some of the new ones.
      const outcome = await reading.then(
        () => 'read',
        () => 'failed',
      );
      if (outcome === 'read') assert.ok(Buffer.concat(received).equals(Buffer.alloc(size, 'a')));
      else assert.ok(received.every((chunk) => !chunk.includes('b')));
      assert.equal((await read(blobs, 'outputs/req_swap/x.bin'))?.bytes.toString('latin1', 0, 1), 'b');
    });

    test('missing blobs read as null and delete quietly', async () => {
      const { blobs } = await open();
      assert.equal(await blobs.get('outputs/none.png'), null);
      await blobs.put('gone/x.txt', new Uint8Array([1, 2]), 'text/plain');
      assert.equal(await blobs.get('gone/x.txt/below'), null);
      await blobs.delete('gone/x.txt');
      assert.equal(await blobs.get('gone/x.txt'), null);
      await blobs.delete('gone/x.txt');
    });

    test('list finds the blobs under a prefix, by key, and no others', async () => {
      const { blobs, clock } = await open();
      clock.now = 1_000;
      await blobs.put('outputs/req_7/b.png', new Uint8Array([1, 2]), 'image/png');
      await blobs.put('outputs/req_7/a.json', new Uint8Array([3]), 'application/json');
      await blobs.put('outputs/req_70/c.png', new Uint8Array([4]), 'image/png');
      await blobs.put('outputs/req_8/d.png', new Uint8Array([5]), 'image/png');
      assert.deepEqual(await blobs.list('outputs/req_7/'), [
        { key: 'outputs/req_7/a.json', size: 1, contentType: 'application/json', createdAt: 1_000 },
        { key: 'outputs/req_7/b.png', size: 2, contentType: 'image/png', createdAt: 1_000 },
      ]);
      assert.deepEqual(
        (await blobs.list('outputs/req_7')).map((blob) => blob.key),
        ['outputs/req_7/a.json', 'outputs/req_7/b.png', 'outputs/req_70/c.png'],
      );
      assert.deepEqual(await blobs.list('outputs/req_9/'), []);
    });

    test('sweep deletes blobs created before a time, at most a batch at a time', async () => {
      const { blobs, clock } = await open();
      clock.now = 10_000;
      for (let i = 0; i < 5; i++) await blobs.put(`sweep/old-${i}/x.bin`, new Uint8Array(600_000), 'application/octet-stream');
      clock.now = 20_000;
      await blobs.put('sweep/new/x.bin', new Uint8Array([1]), 'application/octet-stream');
      assert.equal(await blobs.sweep(20_000, 2), 2);
      assert.equal((await blobs.list('sweep/')).length, 4);
      assert.equal(await blobs.sweep(20_000, 10), 3);
      assert.equal(await blobs.sweep(20_000, 10), 0);
      assert.deepEqual(
        (await blobs.list('sweep/')).map((blob) => blob.key),
        ['sweep/new/x.bin'],
      );
      assert.equal(await blobs.sweep(20_001, 10), 1);
      assert.deepEqual(await blobs.list('sweep/'), []);
    });

    test('a blob dated by its writer is swept by that date, not by when it was written', async () => {
      const { blobs, clock } = await open();
      clock.now = 50_000;
      const info = await blobs.put('dated/job/video-0.mp4', new Uint8Array([1, 2]), 'video/mp4', 30_000);
      assert.equal(info.createdAt, 30_000);
      assert.equal((await blobs.list('dated/'))[0].createdAt, 30_000);
      assert.equal(await blobs.sweep(30_000, 10), 0);
      assert.equal(await blobs.sweep(30_001, 10), 1);
      assert.deepEqual(await blobs.list('dated/'), []);
    });

    test('unsafe keys, prefixes and content types are rejected', async () => {
      const { blobs } = await open();
      for (const key of ['', '../escape', 'a/../../b', '/etc/passwd', 'a//b', 'a/./b', '.hidden', 'a\\b', 'a/', 'x'.repeat(600), 'a/%2e%2e/b', 'é']) {
        assert.equal(isSafeBlobKey(key), false, key);
        await assert.rejects(blobs.put(key, new Uint8Array([1]), 'text/plain'), GatewayError, key);
        await assert.rejects(blobs.get(key), GatewayError, key);
        await assert.rejects(blobs.delete(key), GatewayError, key);
      }
      for (const prefix of ['../', '/abs', 'a//']) await assert.rejects(blobs.list(prefix), GatewayError, prefix);
      await assert.rejects(blobs.put('ok.txt', new Uint8Array([1]), 'text/plain\nx'), GatewayError);
      await assert.rejects(blobs.put('ok.txt', new Uint8Array([1]), ''), GatewayError);
      assert.equal(isSafeBlobKey('outputs/req_00t4/image-0.webp'), true);
    });
  });
}
