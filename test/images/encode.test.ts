/** The image answer's bytes are exactly the JSON of its body, whatever the body holds. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { imageResultPieces, type ImageResultBody } from '../../src/dialects/images/encode.ts';

const usage = { input_tokens: 5, input_tokens_details: { text_tokens: 5, image_tokens: 0 }, output_tokens: 272, total_tokens: 277 };

test('imageResultPieces are JSON.stringify of the body, the base64 sent as it is', () => {
  const bodies: ImageResultBody[] = [
    { created: 1767225600, data: [] },
    { created: 1767225600, data: [{ b64_json: 'iVBORw0KGgo=' }] },
    { created: 1767225600, data: [{ b64_json: 'iVBORw0KGgo=', revised_prompt: 'a "lighthouse" \\ at dusk, 灯台 🌅\n' }, { b64_json: '' }], usage },
    { created: 0, data: [{ url: 'https://gateway.example/v1/outputs/req_1/files/image-0.png?expires=1&signature=x' }, { url: 'u', revised_prompt: 'p' }] },
    { created: 5, data: [{ b64_json: 'QUJD' }, { url: 'u' }, { b64_json: 'REVG', revised_prompt: '' }], usage },
  ];
  for (const body of bodies) {
    const bytes = imageResultPieces(body).toBuffer();
    assert.equal(imageResultPieces(body).byteLength, bytes.byteLength);
    assert.equal(bytes.toString('utf8'), JSON.stringify(body));
    assert.deepEqual(JSON.parse(bytes.toString('utf8')), body);
  }
});

test('a base64 given as the bytes the upstream sent is sent as its text would be', () => {
  const text = 'iVBORw0KGgoAAAANSUhEUg==';
  const asBytes: ImageResultBody = {
    created: 7,
    data: [{ b64_json: Buffer.from(`{"b64_json":"${text}"}`).subarray(13, 13 + text.length), revised_prompt: 'r' }, { b64_json: 'QUJD' }],
    usage,
  };
  assert.equal(
    imageResultPieces(asBytes).toBuffer().toString('utf8'),
    JSON.stringify({ ...asBytes, data: [{ b64_json: text, revised_prompt: 'r' }, { b64_json: 'QUJD' }] }),
  );
});
