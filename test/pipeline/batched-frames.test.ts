/**
 * The SSE body (src/http/event-stream.ts): frames ready in one turn of the event loop leave as one
 * chunk, frames that arrive apart leave apart, and a body destroyed by a departing client stops
 * the frames behind it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BatchedFrames } from '../../src/http/event-stream.ts';

const asIs = (frame: string): string => frame;

async function chunksOf(body: BatchedFrames<string>): Promise<string[]> {
  const chunks: string[] = [];
  for await (const chunk of body) chunks.push(String(chunk));
  return chunks;
}

describe('BatchedFrames', () => {
  test('the frames of batches produced together are one chunk; a frame after a pause is the next one', async () => {
    async function* frames(): AsyncGenerator<readonly string[]> {
      yield ['a', 'b'];
      yield ['c'];
      await sleep(10);
      yield ['d'];
      await Promise.resolve();
      yield ['e'];
    }
    assert.deepEqual(await chunksOf(new BatchedFrames(frames(), asIs)), ['abc', 'de']);
  });

  test('a body destroyed while its reader is behind stops the frames at once (their finally runs)', async () => {
    let stopped = false;
    let produced = 0;
    async function* frames() {
      try {
        // More than the body buffers: it stops asking for frames until its reader catches up.
        while (true) {
          produced++;
          yield ['x'.repeat(64 * 1024)];
          await sleep(1);
        }
      } finally {
        stopped = true;
      }
    }
    const body = new BatchedFrames(frames(), asIs);
    await sleep(50);
    assert.ok(produced <= 2, `the body kept pulling frames nobody read (${produced})`);
    body.destroy();
    await new Promise((resolve) => body.once('close', resolve));
    assert.equal(stopped, true);
  });

  test('a failure of the frames destroys the body with it', async () => {
    async function* frames() {
      yield ['x'];
      throw new Error('boom');
    }
    await assert.rejects(chunksOf(new BatchedFrames(frames(), asIs)), /boom/);
  });
});
