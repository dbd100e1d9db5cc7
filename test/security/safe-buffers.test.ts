/**
 * Safe buffers (docs/security.md): a third-party parser only ever sees an exact copy of the
 * upload. A small `Buffer` decoded from base64 is a view into a pool shared with other requests;
 * image-size reads through a DataView over the view's whole ArrayBuffer, so a 16-byte "PNG" or a
 * 24-byte WebP header had its dimensions read from bytes that were never sent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { imageSize } from 'image-size';
import { ownBytes } from '../../src/core/bytes.ts';
import { GatewayError } from '../../src/core/errors.ts';
import { imageFromBase64 } from '../../src/dialects/images/image-file.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { PNG_CUT_AT_IHDR, WEBP_CUT_AT_VP8X } from './files.ts';

/** Bytes that would read as a plausible size: 0x00000100 is 256 pixels in a PNG header, 0x000100 + 1 in a WebP one. */
const FOREIGN = [0x00, 0x00, 0x01, 0x00];

/**
 * Writes FOREIGN over the rest of Node's shared Buffer pool, where the next small `Buffer.from`
 * lands; a fresh pool is started first when the current one is nearly used up.
 */
function fillPoolAfterNextAllocation(): void {
  let probe = Buffer.allocUnsafe(8);
  while (probe.byteOffset + 1024 > probe.buffer.byteLength) probe = Buffer.allocUnsafe(8);
  const pool = new Uint8Array(probe.buffer);
  for (let index = probe.byteOffset + 8; index < pool.length; index++) pool[index] = FOREIGN[index % FOREIGN.length];
}

const refusal = async (promise: Promise<unknown>): Promise<GatewayError> => {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof GatewayError, String(error));
    return error;
  }
  assert.fail('the image was accepted');
};

describe('safe buffers', () => {
  test('a pooled view hands image-size the bytes after it; its exact copy does not', () => {
    const pooled = Buffer.concat([PNG_CUT_AT_IHDR, Buffer.from([0, 0, 1, 0, 0, 0, 1, 0, 8, 6, 0, 0, 0])]).subarray(0, PNG_CUT_AT_IHDR.length);
    assert.deepEqual({ ...imageSize(pooled) }, { width: 256, height: 256, type: 'png' }, 'the hazard: a view is read past its end');
    const own = ownBytes(pooled);
    assert.equal(own.buffer.byteLength, PNG_CUT_AT_IHDR.length);
    assert.throws(() => imageSize(own));
  });

  test('a headers-only PNG or WebP decoded into a polluted pool is refused, never sized from the pool', async () => {
    for (const [name, file] of [
      ['png', PNG_CUT_AT_IHDR],
      ['webp', WEBP_CUT_AT_VP8X],
    ] as const) {
      for (let round = 0; round < 5; round++) {
        fillPoolAfterNextAllocation();
        const error = await refusal(imageFromBase64('image', file.toString('base64')));
        assert.equal(error.status, 400, name);
        assert.equal(error.message, `'image' is not a valid PNG, JPEG or WebP image.`, name);
      }
    }
  });
});

describe('safe buffers over HTTP', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway();
  });
  after(() => gateway.close());

  test('every answer to a cut-short image is the same 400, whatever other requests left in memory', async () => {
    const messages = new Set<string>();
    for (let round = 0; round < 10; round++) {
      for (const file of [PNG_CUT_AT_IHDR, WEBP_CUT_AT_VP8X]) {
        fillPoolAfterNextAllocation();
        const response = await call(gateway.baseUrl, 'POST', '/v1/images/edits', {
          key: gateway.apiKey,
          json: { model: 'gateway/prism-image-2', prompt: 'p', image: file.toString('base64') },
        });
        assertError(response, { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'image' });
        messages.add(response.body.error.message);
      }
    }
    assert.deepEqual([...messages], [`'image' is not a valid PNG, JPEG or WebP image.`]);
  });
});
