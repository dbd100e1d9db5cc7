/**
 * The SSE body (src/http/event-stream.ts): frames ready in one turn of the event loop leave as one
 * write, frames that arrive apart leave apart, a sink that takes no more stops the asking for
 * frames until it drains, and a body destroyed by a departing client stops the frames behind it;
 * with a keep-alive, a silence is filled with its frame and the timer ends with the body; the body
 * says when the response is under way (what a route handler waits for). In a
 * chunked HTTP/1.1 response, the frames after the first write go to the connection as chunks framed
 * by the body, and the connection still serves the next request; an HTTP/1.0 response gets them
 * unframed; a client that stops reading stops the frames.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { setImmediate as setImmediateTurn, setTimeout as sleep } from 'node:timers/promises';
import { FrameWriter, KeepAlive } from '../../src/http/event-stream.ts';
import { eventually } from '../chat/helpers.ts';

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

  test('the body is under way once its first frames are written, once it ended empty, or once destroyed; not when it failed first', async () => {
    // Whether `promise` settles within a few turns of the event loop (where it must not: the body
    // writes in a turn of its own), or within `ms` (where it must: a bound, not a wait).
    const turns = async () => {
      for (let turn = 0; turn < 5; turn++) await setImmediateTurn();
    };
    const settled = (promise: Promise<void>, ms?: number) =>
      Promise.race([promise.then(() => true), (ms === undefined ? turns() : sleep(ms)).then(() => false)]);

    const release = Promise.withResolvers<void>();
    const finish = Promise.withResolvers<void>();
    async function* late(): AsyncGenerator<readonly string[]> {
      await release.promise;
      yield ['a'];
      await finish.promise;
    }
    const writing = sink();
    const waiting = new FrameWriter(late(), asIs);
    waiting.pipe(writing.writable);
    assert.equal(await settled(waiting.underWay), false);
    release.resolve();
    assert.equal(await settled(waiting.underWay, 5_000), true);
    assert.deepEqual(writing.writes, ['a']);
    finish.resolve();
    await once(writing.writable, 'finish');

    async function* none(): AsyncGenerator<readonly string[]> {}
    const empty = new FrameWriter(none(), asIs);
    const emptySink = sink();
    empty.pipe(emptySink.writable);
    assert.equal(await settled(empty.underWay, 5_000), true);
    assert.equal(emptySink.writable.writableEnded, true);

    const hold = Promise.withResolvers<void>();
    async function* silent(): AsyncGenerator<readonly string[]> {
      await hold.promise;
      yield ['never sent'];
    }
    const gone = new FrameWriter(silent(), asIs);
    gone.pipe(sink().writable);
    assert.equal(await settled(gone.underWay), false);
    gone.destroy();
    assert.equal(await settled(gone.underWay, 5_000), true);
    hold.resolve();

    async function* one(): AsyncGenerator<readonly string[]> {
      yield ['a'];
    }
    const failing = new FrameWriter(one(), () => {
      throw new Error('boom');
    });
    const failed = once(failing, 'error');
    failing.pipe(sink().writable);
    await failed;
    assert.equal(await settled(failing.underWay), false);
  });

  describe('in an HTTP response', () => {
    /**
     * A server whose every response is a FrameWriter of `frames()`; `connections` are the server's
     * sockets, each with the strings written to it in one call (`write`, wrapped).
     */
    async function frameServer(frames: () => AsyncIterable<readonly string[]>) {
      const writesOf = new Map<Socket, string[]>();
      const server = createServer((_request, response: ServerResponse) => {
        response.setHeader('content-type', 'text/event-stream');
        new FrameWriter(frames(), asIs).pipe(response);
      });
      server.on('connection', (socket: Socket) => {
        const writes: string[] = [];
        writesOf.set(socket, writes);
        const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
        socket.write = ((chunk: unknown, ...rest: unknown[]) => {
          writes.push(String(chunk));
          return write(chunk, ...rest);
        }) as typeof socket.write;
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      return { server, port: (server.address() as AddressInfo).port, writesOf };
    }

    /** Sends `request` on `socket` and reads until `done` says the bytes read so far are the whole answer. */
    async function exchange(socket: Socket, request: string, done: (text: string) => boolean): Promise<string> {
      let text = '';
      const finished = Promise.withResolvers<string>();
      const onData = (chunk: Buffer) => {
        text += chunk.toString('latin1');
        if (done(text)) finished.resolve(text);
      };
      socket.on('data', onData);
      socket.once('close', () => finished.resolve(text));
      socket.write(request);
      try {
        return await finished.promise;
      } finally {
        socket.off('data', onData);
      }
    }

    const body = (answer: string) => answer.slice(answer.indexOf('\r\n\r\n') + 4);
    const POST = 'POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 0\r\n\r\n';

    /**
     * Three frames, each batch a turn of the event loop after the one before: the body's write of a
     * batch, scheduled when the batch came, runs before the next one is produced.
     */
    async function* threeFrames(): AsyncGenerator<readonly string[]> {
      yield ['data: a\n\n'];
      await setImmediateTurn();
      yield ['data: bb\n\n'];
      await setImmediateTurn();
      yield ['data: ccc\n\n'];
    }

    test('the frames after the first write leave as whole chunks in one write each, and the connection serves the next request', async () => {
      const { server, port, writesOf } = await frameServer(threeFrames);
      const client = connect(port, '127.0.0.1');
      try {
        await once(client, 'connect');
        const chunked = (frame: string) => `${frame.length.toString(16)}\r\n${frame}\r\n`;
        const expected = `${chunked('data: a\n\n')}${chunked('data: bb\n\n')}${chunked('data: ccc\n\n')}0\r\n\r\n`;
        for (let round = 0; round < 2; round++) {
          const answer = await exchange(client, POST, (text) => text.endsWith('0\r\n\r\n'));
          assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
          assert.match(answer, /\r\ntransfer-encoding: chunked\r\n/i);
          assert.equal(body(answer), expected);
        }
        const [writes] = [...writesOf.values()];
        // The middle batch is neither the first (it carries the headers) nor the last (it leaves with the end).
        assert.equal(writes.filter((write) => write === chunked('data: bb\n\n')).length, 2, JSON.stringify(writes));
      } finally {
        client.destroy();
        server.close();
      }
    });

    test('an HTTP/1.0 answer has no chunks: the frames go through the response unframed, and the connection closes after them', async () => {
      const { server, port } = await frameServer(threeFrames);
      const client = connect(port, '127.0.0.1');
      try {
        await once(client, 'connect');
        const answer = await exchange(client, 'POST / HTTP/1.0\r\ncontent-length: 0\r\n\r\n', () => false);
        assert.doesNotMatch(answer, /transfer-encoding/i);
        assert.equal(body(answer), 'data: a\n\ndata: bb\n\ndata: ccc\n\n');
      } finally {
        client.destroy();
        server.close();
      }
    });

    test('a client that stops reading stops the frames once its connection is full, and gets them all when it reads again', async () => {
      const FRAME = 'x'.repeat(1024 * 1024);
      const COUNT = 48;
      let produced = 0;
      async function* frames(): AsyncGenerator<readonly string[]> {
        for (let i = 0; i < COUNT; i++) {
          produced++;
          yield [FRAME];
          await setImmediateTurn();
        }
      }
      const { server, port, writesOf } = await frameServer(frames);
      const client = connect(port, '127.0.0.1');
      try {
        await once(client, 'connect');
        client.pause();
        client.write(POST);
        // Once the kernel's buffers of the connection are full, its own fills up past its mark...
        await eventually(async () => assert.ok([...writesOf.keys()].some((connection) => connection.writableNeedDrain)));
        // ...and the body asks for no more frames (one in flight at most) however many turns pass.
        const atFull = produced;
        for (let turn = 0; turn < 20; turn++) await setImmediateTurn();
        assert.ok(produced <= atFull + 1 && produced < COUNT, `the body kept pulling frames nobody read (${atFull} → ${produced})`);
        let received = 0;
        const ended = Promise.withResolvers<void>();
        client.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (chunk.subarray(-5).toString() === '0\r\n\r\n') ended.resolve();
        });
        client.resume();
        await ended.promise;
        assert.equal(produced, COUNT);
        assert.ok(received > COUNT * FRAME.length, `${received} bytes`);
      } finally {
        client.destroy();
        server.close();
      }
    });
  });
});
