/**
 * Signed output URLs and their secret, without a server: what a signature covers, when it expires
 * (by an injected clock), that any holder of the same secret checks another's URLs, and how the
 * secret is created and kept.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Outputs, outputBucket, outputFileName } from '../../src/outputs/outputs.ts';
import { loadOutputSecret, OUTPUT_SECRET_FILE, OutputSecretError } from '../../src/outputs/secret.ts';
import { checkSignature, SIGNED_URL_LIFETIME_MS } from '../../src/outputs/signing.ts';
import { createFileBlobStore } from '../../src/storage/blobs.ts';

const folders: string[] = [];
after(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});
function newFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'gateway-outputs-'));
  folders.push(folder);
  return folder;
}

const SECRET = Buffer.from('a secret of at least thirty-two characters', 'utf8');
const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);

function outputs(secret: Uint8Array = SECRET, publicUrl?: string): Outputs {
  return new Outputs({ blobs: createFileBlobStore(newFolder()), secret, publicUrl });
}

function parts(url: string): { path: string; expires: string; signature: string } {
  const parsed = new URL(url);
  return { path: parsed.pathname, expires: parsed.searchParams.get('expires')!, signature: parsed.searchParams.get('signature')! };
}

test('a signed URL names the file, expires 10 minutes after signing, and checks until then', () => {
  const signed = outputs().signedOutputUrl('http://127.0.0.1:8080', 'req_abc', 'image-0.png', NOW);
  assert.equal(signed.expiresAt, (NOW + SIGNED_URL_LIFETIME_MS) / 1000);
  assert.equal(SIGNED_URL_LIFETIME_MS, 600_000);
  const { path, expires, signature } = parts(signed.url);
  assert.equal(path, '/v1/outputs/req_abc/files/image-0.png');
  assert.ok(signed.url.startsWith('http://127.0.0.1:8080/v1/outputs/req_abc/files/image-0.png?expires='));
  assert.equal(checkSignature(SECRET, path, expires, signature, NOW), 'valid');
  assert.equal(checkSignature(SECRET, path, expires, signature, NOW + SIGNED_URL_LIFETIME_MS - 1), 'valid');
  assert.equal(checkSignature(SECRET, path, expires, signature, NOW + SIGNED_URL_LIFETIME_MS), 'expired');
  assert.equal(checkSignature(SECRET, path, expires, signature, NOW + 86_400_000), 'expired');
});

test('a signature covers the path and the expiry: any change to either, or another secret, fails', () => {
  const { path, expires, signature } = parts(outputs().signedOutputUrl('http://h', 'req_abc', 'image-0.png', NOW).url);
  assert.equal(checkSignature(SECRET, '/v1/outputs/req_abc/files/image-1.png', expires, signature, NOW), 'invalid');
  assert.equal(checkSignature(SECRET, '/v1/outputs/req_abd/files/image-0.png', expires, signature, NOW), 'invalid');
  assert.equal(checkSignature(SECRET, path, String(Number(expires) + 3600), signature, NOW), 'invalid');
  const flipped = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;
  assert.equal(checkSignature(SECRET, path, expires, flipped, NOW), 'invalid');
  assert.equal(checkSignature(Buffer.from('another secret of thirty-two characters!'), path, expires, signature, NOW), 'invalid');
  // Malformed query values are invalid, never an exception or an expiry.
  for (const [e, s] of [
    [undefined, signature],
    [expires, undefined],
    ['', signature],
    [`${expires}.0`, signature],
    ['1e12', signature],
    [`-${expires}`, signature],
    [expires, `${signature}=`],
    [expires, signature.slice(1)],
    [[expires], signature],
  ]) {
    assert.equal(checkSignature(SECRET, path, e, s, NOW), 'invalid', `${String(e)} ${String(s)}`);
  }
  // Only the canonical text: the last character's two spare bits may not differ (the same bytes).
  const last = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.indexOf(signature.at(-1)!);
  for (let spare = 1; spare < 4; spare++) {
    const twin = `${signature.slice(0, -1)}${'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[last ^ spare]}`;
    assert.deepEqual(Buffer.from(twin, 'base64url'), Buffer.from(signature, 'base64url'), 'a twin decodes to the same bytes');
    assert.equal(checkSignature(SECRET, path, expires, twin, NOW), 'invalid', twin);
  }
  // An expired URL whose signature is also wrong is refused as invalid, not as expired.
  assert.equal(checkSignature(SECRET, path, expires, flipped, NOW + 86_400_000), 'invalid');
});

test('instances that share the secret sign alike and accept each other’s URLs', () => {
  const a = outputs(Buffer.from(SECRET));
  const b = outputs(Buffer.from(SECRET));
  assert.equal(a.signedOutputUrl('https://gw', 'req_1', 'output.json', NOW).url, b.signedOutputUrl('https://gw', 'req_1', 'output.json', NOW).url);
});

test('the origin is GATEWAY_PUBLIC_URL when set, else the request’s own', () => {
  const request = { protocol: 'http', host: '127.0.0.1:9000' };
  assert.equal(outputs().originOf(request), 'http://127.0.0.1:9000');
  const behindProxy = outputs(SECRET, 'https://gateway.example.com/ai/');
  assert.equal(behindProxy.originOf(request), 'https://gateway.example.com/ai');
  assert.ok(
    behindProxy
      .signedOutputUrl(behindProxy.originOf(request), 'req_1', 'a.png', NOW)
      .url.startsWith('https://gateway.example.com/ai/v1/outputs/req_1/files/a.png?'),
  );
});

test('request ids and file names that are not one plain segment are refused', async () => {
  const store = outputs();
  for (const [id, name] of [
    ['../req', 'a.png'],
    ['req_1', '../a.png'],
    ['req_1', 'a/b.png'],
    ['req_1', '.hidden'],
    ['', 'a.png'],
    ['req_1', 'output.json'],
    ['req.1', 'a.png'],
  ]) {
    await assert.rejects(store.storeOutputFiles(id, [{ name, contentType: 'image/png', bytes: new Uint8Array([1]) }]), `${id} ${name}`);
  }
  assert.throws(() => store.signedOutputUrl('http://h', 'req_1', '../x', NOW));
  const stored = await store.storeOutputFiles('req_1', [{ name: 'image-0.png', contentType: 'image/png', bytes: new Uint8Array([1]) }]);
  assert.deepEqual(
    stored.map((blob) => blob.key),
    ['files/req_1/req_1.image-0.png'],
  );
});

test("a request's files share a folder with the requests of the same two seconds; files of the layout before are still read", async () => {
  const store = outputs();
  // Time-ordered ids (src/core/ids.ts): 11 characters of time, then 16 random ones.
  const [first, second, later] = ['req_00t4abcd000aaaaaaaaaaaaaaaa', 'req_00t4abcd7zzbbbbbbbbbbbbbbbb', 'req_00t4abce000cccccccccccccccc'];
  for (const id of [first, second, later]) await store.storeOutputFiles(id, [{ name: 'image-0.png', contentType: 'image/png', bytes: Buffer.from(id) }]);
  assert.equal(outputBucket(first), 'req_00t4abcd');
  assert.equal(outputBucket(second), outputBucket(first));
  assert.notEqual(outputBucket(later), outputBucket(first));
  for (const id of [first, second, later]) {
    assert.deepEqual(
      (await store.listOutputFiles(id)).map((file) => [file.name, file.key]),
      [['image-0.png', `files/${outputBucket(id)}/${id}.image-0.png`]],
    );
    const blob = await store.readOutputFile(id, 'image-0.png');
    assert.equal(Buffer.concat(await blob!.stream.toArray()).toString(), id);
  }
  // A file stored as `outputs/{requestId}/{name}` before this layout is listed and read until it expires.
  await store.blobs.put(`outputs/${first}/image-1.png`, Buffer.from('before'), 'image/png');
  assert.deepEqual(
    (await store.listOutputFiles(first)).map((file) => file.name),
    ['image-0.png', 'image-1.png'],
  );
  const legacy = await store.readOutputFile(first, 'image-1.png');
  assert.equal(Buffer.concat(await legacy!.stream.toArray()).toString(), 'before');
  assert.equal(outputFileName(`outputs/${first}/image-1.png`), 'image-1.png');
  assert.equal(outputFileName(`files/${outputBucket(first)}/${first}.video-0.mp4`), 'video-0.mp4');
});

test('without GATEWAY_OUTPUT_SECRET, the first start creates a private secret in the data dir and later starts keep it', async () => {
  const dataDir = join(newFolder(), 'data');
  const first = await loadOutputSecret({ dataDir, operatorSecret: undefined });
  assert.ok(first.length >= 32);
  const file = join(dataDir, OUTPUT_SECRET_FILE);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(readFileSync(file, 'utf8').trim(), Buffer.from(first).toString('utf8'));
  assert.deepEqual(await loadOutputSecret({ dataDir, operatorSecret: undefined }), first);
  const concurrent = await Promise.all(Array.from({ length: 4 }, () => loadOutputSecret({ dataDir: join(dataDir, 'other'), operatorSecret: undefined })));
  for (const secret of concurrent) assert.deepEqual(secret, concurrent[0]);
});

test('GATEWAY_OUTPUT_SECRET is used as given, and a short one is refused', async () => {
  const dataDir = newFolder();
  const operatorSecret = 'x'.repeat(40);
  assert.deepEqual(await loadOutputSecret({ dataDir, operatorSecret }), Buffer.from(operatorSecret));
  await assert.rejects(loadOutputSecret({ dataDir, operatorSecret: 'short' }), OutputSecretError);
});
