/**
 * The SSE body (src/http/event-stream.ts): frames ready in one turn of the event loop leave as one
 * write, frames that arrive apart leave apart, a sink that takes no more stops the asking for
 * frames until it drains, and a body destroyed by a departing client stops the frames behind it;
 * with a keep-alive, a silence is filled with its frame and the timer ends with the body.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { setImmediate as setImmediateTurn, setTimeout as sleep } from 'node:timers/promises';
import { FrameWriter, KeepAlive } from '../../src/http/event-stream.ts';

const asIs = (frame: string): string => frame;

/** A sink that keeps every write apart; `held` holds back its writes' completion (a client not reading). */
function sink(options: { readonly highWaterMark?: number; readonly onWrite?: (chunk: string) => void } = {}) {
  const writes: string[] = [];
  let release: (() => void) | undefined;
  let holding = false;
  const writable = new Writable({
    highWaterMark: options.highWaterMark ?? 16 * 1024,
    decodeStrings: false,
    write(chunk: string, _encoding, callback) {
      writes.push(String(chunk));
      options.onWrite?.(String(chunk));
      if (holding) release = callback;
      else callback();
    },
  });
  return {
    writable,
    writes,
    hold: () => (holding = true),
    resume: () => {
      holding = false;
      release?.();
    },
  };
}

describe('FrameWriter', () => {
  test('the frames of batches produced together are one write; a frame after a pause is the next one', async () => {
    // The pause lasts until the sink has the first write: a timed pause can be outlasted by a busy machine.
    const firstWrite = Promise.withResolvers<void>();
    async function* frames(): AsyncGenerator<readonly string[]> {
      yield ['a', 'b'];
      yield ['c'];
      await firstWrite.promise;
      yield ['d'];
      await Promise.resolve();
      yield ['e'];
    }
    const { writable, writes } = sink({ onWrite: () => firstWrite.resolve() });
    new FrameWriter(frames(), asIs).pipe(writable);
    await once(writable, 'finish');
    assert.deepEqual(writes, ['abc', 'de']);
  });

  test('the body ends before its sink does', async () => {
    async function* frames(): AsyncGenerator<readonly string[]> {
      yield ['a'];
    }
    const { writable } = sink();
    const body = new FrameWriter(frames(), asIs);
    const order: string[] = [];
    body.once('end', () => order.push('body'));
    writable.once('finish', () => order.push('sink'));
    body.pipe(writable);
    await once(writable, 'finish');
    assert.deepEqual(order, ['body', 'sink']);
  });

  test('a sink that takes no more is written no more frames until it drains, and then gets them all', async () => {
    let produced = 0;
    async function* frames() {
      // Each next frame comes a turn later, after the write that finds the sink full.
      for (let i = 0; i < 10; i++) {
        produced++;
        yield ['x'.repeat(64 * 1024)];
        await setImmediateTurn();
      }
    }
    const { writable, writes, hold, resume } = sink();
    hold();
    new FrameWriter(frames(), asIs).pipe(writable);
    await sleep(50);
    assert.ok(produced <= 2, `the body kept pulling frames nobody read (${produced})`);
    resume();
    await once(writable, 'finish');
    assert.equal(writes.join('').length, 10 * 64 * 1024);
  });

  test('a body destroyed while its sink is behind stops the frames at once (their finally runs)', async () => {
    const stopped = Promise.withResolvers<void>();
    async function* frames() {
      try {
        while (true) {
          yield ['x'.repeat(64 * 1024)];
          await setImmediateTurn();
        }
      } finally {
        stopped.resolve();
      }
    }
    const { writable, hold } = sink();
    hold();
    const body = new FrameWriter(frames(), asIs);
    body.pipe(writable);
    await sleep(20);
    body.destroy();
    await stopped.promise;
  });

  test('a failure of the frames is the body failing, and the frames are stopped', async () => {
    let stopped = false;
    async function* frames() {
      try {
        yield ['x'];
        yield ['y'];
      } finally {
        stopped = true;
      }
    }
    const failing = (frame: string): string => {
      if (frame === 'y') throw new Error('boom');
      return frame;
    };
    const body = new FrameWriter(frames(), failing);
    const failed = once(body, 'error');
    body.pipe(sink().writable);
    const [error] = await failed;
    assert.match(String(error), /boom/);
    assert.equal(stopped, true);
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
    const { writable, writes } = sink({ onWrite: (chunk) => chunk === 'ping' && silenceFilled() });
    // The keep-alive's timer holds no process open: in a server the stream's connection does, here this.
    const connection = setInterval(() => {}, 60_000);
    new FrameWriter(frames(), asIs, new KeepAlive(5, 'ping')).pipe(writable);
    await once(writable, 'finish');
    await sleep(20);
    clearInterval(connection);
    assert.equal(writes[0], 'a');
    assert.equal(writes.at(-1), 'b');
    const between = writes.slice(1, -1);
    assert.ok(between.length > 0 && between.every((chunk) => chunk === 'ping'), JSON.stringify(writes));
  });
});
