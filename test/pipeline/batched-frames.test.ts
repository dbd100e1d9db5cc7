/**
 * The SSE body (src/http/event-stream.ts): frames ready in one turn of the event loop leave as one
 * chunk, frames that arrive apart leave apart, and a body destroyed by a departing client stops
 * the frames behind it; with a keep-alive, a silence is filled with its frame and the timer ends
 * with the body.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setImmediate as setImmediateTurn, setTimeout as sleep } from 'node:timers/promises';
import { BatchedFrames, KeepAlive } from '../../src/http/event-stream.ts';

const asIs = (frame: string): string => frame;

async function chunksOf(body: BatchedFrames<string>, onChunk?: () => void): Promise<string[]> {
  const chunks: string[] = [];
  for await (const chunk of body) {
    chunks.push(String(chunk));
    onChunk?.();
  }
  return chunks;
}

describe('BatchedFrames', () => {
  test('the frames of batches produced together are one chunk; a frame after a pause is the next one', async () => {
    // The pause lasts until the reader has the first chunk: a timed pause can be outlasted by a busy machine.
    const firstRead = Promise.withResolvers<void>();
    async function* frames(): AsyncGenerator<readonly string[]> {
      yield ['a', 'b'];
      yield ['c'];
      await firstRead.promise;
      yield ['d'];
      await Promise.resolve();
      yield ['e'];
    }
    assert.deepEqual(await chunksOf(new BatchedFrames(frames(), asIs), firstRead.resolve), ['abc', 'de']);
  });

  test('a body destroyed while its reader is behind stops the frames at once (their finally runs)', async () => {
    let stopped = false;
    let produced = 0;
    async function* frames() {
      try {
        // More than the body buffers: it stops asking for frames until its reader catches up.
        // Each next frame comes a turn later, after the flush that finds the body full (a timed
        // pause could end first on a busy machine).
        while (true) {
          produced++;
          yield ['x'.repeat(64 * 1024)];
          await setImmediateTurn();
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

  test('a keep-alive frame fills a silence between frames, and none is sent once the body ended', async () => {
    let silenceFilled: () => void = () => {};
    const filled = new Promise<void>((resolve) => (silenceFilled = resolve));
    async function* frames(): AsyncGenerator<readonly string[]> {
      yield ['a'];
      // No frame until the client has seen a keep-alive.
      await filled;
      yield ['b'];
    }
    const chunks: string[] = [];
    // The keep-alive's timer holds no process open: in a server the stream's connection does, here this.
    const connection = setInterval(() => {}, 60_000);
    for await (const chunk of new BatchedFrames(frames(), asIs, new KeepAlive(5, 'ping'))) {
      chunks.push(String(chunk));
      if (String(chunk) === 'ping') silenceFilled();
    }
    clearInterval(connection);
    assert.equal(chunks[0], 'a');
    assert.equal(chunks.at(-1), 'b');
    const between = chunks.slice(1, -1);
    assert.ok(between.length > 0 && between.every((chunk) => chunk === 'ping'), JSON.stringify(chunks));
  });
});
