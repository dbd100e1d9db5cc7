/** A body sent as its pieces: the same bytes as one buffer, written in one corked write, ended once. */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { JsonPieces } from '../../src/core/json-pieces.ts';

test('the pieces are written in order, corked, and the body ends before its sink does', async () => {
  const image = Buffer.from('{"b64_json":"iVBORw0KGgo="}').subarray(13, 25);
  const pieces = new JsonPieces(['{"data":[{"b64_json":"', image, '","revised_prompt":"灯台 🌅"}]}']);
  const writes: Buffer[][] = [];
  const events: string[] = [];
  const sink = new Writable({
    writev(chunks, done) {
      writes.push(chunks.map(({ chunk }) => Buffer.from(chunk)));
      done();
    },
  });
  pieces.once('end', () => events.push('body end'));
  sink.once('finish', () => events.push('sink finish'));
  assert.equal(pieces.pipe(sink), sink);
  await new Promise((resolve) => sink.once('finish', resolve));
  const sent = Buffer.concat(writes.flat());
  assert.equal(writes.length, 1, 'one corked write');
  assert.equal(sent.toString(), '{"data":[{"b64_json":"iVBORw0KGgo=","revised_prompt":"灯台 🌅"}]}');
  assert.equal(pieces.byteLength, sent.byteLength);
  assert.deepEqual(pieces.toBuffer(), sent);
  assert.deepEqual(events, ['body end', 'sink finish']);
});
