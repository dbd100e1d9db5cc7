/** Strict base64 decoding, and when a received text may be forwarded as the bytes' encoding. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { isCanonicalBase64, strictBase64 } from '../../src/core/base64.ts';

test('the standard encoding of any bytes is canonical, whatever the length of its last group', () => {
  for (let length = 0; length <= 40; length++) {
    const bytes = randomBytes(length);
    const text = bytes.toString('base64');
    const decoded = strictBase64(text);
    assert.ok(decoded, text);
    assert.deepEqual(Buffer.from(decoded), bytes);
    assert.equal(isCanonicalBase64(text, decoded), true, text);
  }
});

test('the URL-safe alphabet and set spare bits decode the same bytes but are not forwarded', () => {
  // 0xfb 0xff encodes as "+/8=" in the standard alphabet, "-_8=" in the URL-safe one.
  const urlSafe = '-_8=';
  const decoded = strictBase64(urlSafe)!;
  assert.deepEqual(Buffer.from(decoded), Buffer.from([0xfb, 0xff]));
  assert.equal(isCanonicalBase64(urlSafe, decoded), false);
  assert.equal(isCanonicalBase64('+/8=', decoded), true);
  // "QQ==" is "A"; "QR==" decodes to "A" too, with spare bits set.
  for (const [text, canonical] of [
    ['QQ==', true],
    ['QR==', false],
    ['QUI=', true],
    ['QUJ=', false],
    ['QUJD', true],
  ] as const) {
    const bytes = strictBase64(text);
    assert.ok(bytes, text);
    assert.equal(isCanonicalBase64(text, bytes), canonical, text);
  }
});

test('text outside the alphabet, misplaced padding and a wrong length are refused', () => {
  for (const text of ['QUJD!A==', 'QQ==QUJD', 'QUJ', 'QU JD', 'QUJD\n']) assert.equal(strictBase64(text), undefined, JSON.stringify(text));
});
