/**
 * An OpenAI Images answer read with its `b64_json` lifted out of the parse (core/json-lift.ts):
 * every byte of the base64 is checked as when it was parsed, and the image is told by its signature.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../../../src/core/errors.ts';
import { liftedJson } from '../../../src/core/json-lift.ts';
import { LIFTED_IMAGE_MEMBERS } from '../../../src/protocols/image-output.ts';
import { parseImagesError } from '../../../src/protocols/openai-images/errors.ts';
import { parseImagesResponse } from '../../../src/protocols/openai-images/response.ts';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
const download = { headers: {}, signal: new AbortController().signal, parseError: parseImagesError };

function read(b64: string) {
  const json = liftedJson(Buffer.from(`{"created":1,"data":[{"b64_json":"${b64}","revised_prompt":"p"}]}`), LIFTED_IMAGE_MEMBERS);
  assert.notEqual((json.value as { data: { b64_json: string }[] }).data[0].b64_json, b64, 'lifted');
  return parseImagesResponse({ body: json.value, lifted: json.lifted }, { model: 'm' }, download);
}

test('a lifted base64 is decoded, checked by its signature, and kept as the bytes received', async () => {
  const text = PNG.toString('base64');
  const result = await read(text);
  const [image] = result.images;
  assert.deepEqual(Buffer.from(image.data), PNG);
  assert.equal(image.mediaType, 'image/png');
  assert.equal(image.revisedPrompt, 'p');
  assert.ok(image.base64 instanceof Uint8Array);
  assert.equal(Buffer.from(image.base64).toString('latin1'), text);
});

test('a lifted base64 with any byte outside the alphabet, or an image of no known signature, is a malformed answer', async () => {
  const text = PNG.toString('base64');
  for (const bad of [
    `${text.slice(0, -4)}*AA=`,
    `${text.slice(0, -4)}\u00e9AA`,
    `${text.slice(0, -4)} AAA`,
    `${text.slice(0, -4)}\tAAA`,
    text.slice(0, -1),
    Buffer.from('GIF89a..').toString('base64'),
  ]) {
    await assert.rejects(read(bad), (error: unknown) => error instanceof GatewayError && error.code === 'upstream_error', JSON.stringify(bad));
  }
});
