/**
 * The two HTTP concerns every dialect route shares: noticing that the client went away (so the
 * upstream call is aborted and a stream is settled for what was used), and sending server-sent
 * events with back-pressure.
 */
import { EventEmitter } from 'node:events';
import { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { type Link, LinkedList } from '../core/linked-list.ts';
import { clientLeftBeforeAnswer } from './client-connection.ts';

/** Aborted when the connection closes before the response was fully written. */
export function clientDisconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (clientLeftBeforeAnswer(reply.raw)) controller.abort();
  });
  return controller.signal;
}

/**
 * A frame that fills every silence of the streams it is given before the silence lasts `everyMs`,
 * so that proxies and clients with idle timeouts keep a silent stream open (the messages dialect's
 * `ping` events). One timer serves every open stream: it ticks every half `everyMs`, and a stream
 * that sent nothing since the tick before gets the frame; silences are filled after half
 * `everyMs` to `everyMs`. A timer per stream cost its creation, a re-arm at every batch sent and
 * its removal: a visible share of a short stream's CPU. The timer holds no process open (the
 * streams' connections do) and stops at a tick that finds no stream, not when the last one ends:
 * streams come and go between ticks, and a timer per coming and going is what it replaces.
 */
export class KeepAlive {
  readonly #everyMs: number;
  readonly #frame: string;
  /** A list, not a `Set`: core/linked-list.ts says why. */
  readonly #streams = new LinkedList<KeptAlive>();
  #timer: NodeJS.Timeout | undefined;

  constructor(everyMs: number, frame: string) {
    this.#everyMs = everyMs;
    this.#frame = frame;
  }

  /** Watches `stream` until the link is removed. */
  watch(stream: KeptAlive): Link<KeptAlive> {
    this.#timer ??= setInterval(this.#tick, this.#everyMs / 2).unref();
    return this.#streams.add(stream);
  }

  readonly #tick = (): void => {
    if (this.#streams.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    // A copy: a tick may end a stream (its write fails), which takes it out of the list.
    for (const stream of [...this.#streams]) stream.tick(this.#frame);
  };
}

interface KeptAlive {
  tick(frame: string): void;
}

/**
 * Streams a run's events as server-sent events, each framed by the dialect's `encode` (the frames
 * of one event; '' for none). Headers go out with the first frame, which the pipeline only
 * produces once an upstream route has answered, so a failure before that is still a plain JSON
 * error with its real status.
 *
 * What a route handler returns: settled once the response is under way (see
 * {@link FrameWriter.underWay}). Returning the reply instead made Fastify watch the response to
 * its end for each stream (the reply is a thenable), one more end-of-stream watcher per stream.
 */
export function sendEventStream<Event>(
  reply: FastifyReply,
  events: AsyncIterable<readonly Event[]>,
  encode: (event: Event) => string,
  keepAlive?: KeepAlive,
): Promise<void> {
  const body = new FrameWriter(events, encode, keepAlive);
  reply
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-cache')
    // Reverse proxies must not buffer the stream.
    .header('x-accel-buffering', 'no')
    .send(body);
  return body.underWay;
}

/** What a {@link FrameWriter} writes to: the response, or any writable stream. */
export type FrameSink = Pick<Writable, 'write' | 'end' | 'once' | 'destroyed' | 'writableNeedDrain'>;

/**
 * The body of a stream: Fastify hands it the response (`pipe`, once, after its onSend hooks and
 * with the reply's headers set), and it writes the frames there itself. Fastify treats any object
 * with `pipe` as a stream body: it runs every hook as for any body, learns the body's end from
 * `end` (or its failure from `error`), and calls `destroy` when the response closes first. A
 * `Readable` piped into the response, as this body was before, cost a stream buffer between the
 * frames and the socket, the pipe's listeners and a few ticks per chunk.
 *
 * The frames of every event ready in one turn of the event loop go out in one write. Upstreams
 * often deliver several events in one network read (and a busy gateway reads several at once);
 * written one by one, each frame would cost its own socket write and system call. Frames that
 * arrive apart in time still leave at once: the batch is written as soon as the loop turn that
 * produced it ends. The next events are asked for only while the response takes what it is
 * written (after a write that returned false, once it drained), so a client that does not read
 * stops the reading of the upstream.
 *
 * Once the headers are out, the frames of a chunked HTTP/1.1 response go to its connection as
 * chunks framed here (see {@link chunkConnection}): through the response, each write of a stream
 * that arrives read by read (as real providers send it) was four writes to the connection and one
 * gathered system call, and cost about twice what one framed write does. The last batch goes
 * through the response, so that it leaves in one write with the response's end.
 */
export class FrameWriter<Event> extends EventEmitter {
  readonly #events: AsyncIterator<readonly Event[]>;
  readonly #encode: (event: Event) => string;
  readonly #keepAlive: KeepAlive | undefined;
  /** Its place among the keep-alive's streams, while it is watched. */
  #keptAlive: Link<KeptAlive> | undefined;
  #sink: FrameSink | undefined;
  /** The response's connection once frames were written to it directly: what must drain then. */
  #connection: Socket | undefined;
  #batch = '';
  #flushScheduled = false;
  /** Set while the pump waits for the sink to drain; called by its `drain`, or by `destroy`. */
  #wake: (() => void) | undefined;
  #stopped = false;
  /** Whether anything was sent since the keep-alive's last tick; its start counts, so the first tick sends nothing. */
  #sentSinceTick = true;
  /**
   * Settles once the response is under way: its headers went out with the first write, it ended,
   * or it was destroyed (its client gone). An async route handler that resolves sooner, while the
   * headers are still to go, has Fastify send its result as the answer. A body that fails first
   * leaves it unsettled: Fastify answers with the error, and drops the body.
   */
  readonly underWay: Promise<void>;
  readonly #isUnderWay: () => void;

  constructor(events: AsyncIterable<readonly Event[]>, encode: (event: Event) => string, keepAlive?: KeepAlive) {
    super();
    this.#events = events[Symbol.asyncIterator]();
    this.#encode = encode;
    this.#keepAlive = keepAlive;
    const { promise, resolve } = Promise.withResolvers<void>();
    this.underWay = promise;
    this.#isUnderWay = resolve;
  }

  /** Starts writing the frames to `sink`, and ends it after the last. */
  pipe<Sink extends FrameSink>(sink: Sink): Sink {
    this.#sink = sink;
    this.#keptAlive = this.#keepAlive?.watch(this);
    void this.#pump();
    return sink;
  }

  /** Stops the frames before their end (the client left). Idempotent. */
  destroy(): void {
    this.#stop();
    this.#isUnderWay();
  }

  /** A tick of the keep-alive: its frame goes out if nothing else did since the tick before. */
  tick(frame: string): void {
    if (this.#sentSinceTick) {
      this.#sentSinceTick = false;
      return;
    }
    // A batch about to be written, or one the client has not read yet, breaks the silence itself.
    if (this.#stopped || this.#batch !== '' || this.#backlog() !== undefined) return;
    this.#write(frame);
  }

  /**
   * Stopping the events stops the run behind them: the upstream is aborted and what was used is
   * settled. A failure to stop is the body's failure, as one of the frames' would be.
   */
  #stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#keptAlive?.remove();
    this.#wake?.();
    Promise.resolve(this.#events.return?.()).catch((failure: unknown) => this.emit('error', failure));
  }

  async #pump(): Promise<void> {
    const sink = this.#sink!;
    try {
      while (!this.#stopped) {
        const backlog = this.#backlog();
        if (backlog !== undefined) {
          await new Promise<void>((resolve) => {
            this.#wake = resolve;
            backlog.once('drain', resolve);
          });
          this.#wake = undefined;
          if (this.#stopped) return;
        }
        const step = await this.#events.next();
        if (step.done || this.#stopped) break;
        for (const event of step.value) this.#batch += this.#encode(event);
        if (!this.#flushScheduled) {
          this.#flushScheduled = true;
          setImmediate(this.#flush);
        }
      }
      if (this.#stopped) return;
      this.#flush(true);
      this.#stopped = true;
      this.#keptAlive?.remove();
      // `end` first: Fastify destroys a body that has not ended when the response finishes.
      this.emit('end');
      sink.end();
      this.#isUnderWay();
    } catch (error) {
      if (this.#stopped) return;
      this.#stop();
      this.emit('error', error);
    }
  }

  /** Writes the batch; `last` when the body ends right after it. */
  readonly #flush = (last = false): void => {
    this.#flushScheduled = false;
    if (this.#batch === '' || this.#stopped) return;
    const batch = this.#batch;
    this.#batch = '';
    this.#write(batch, last);
  };

  #write(frames: string, last = false): void {
    const sink = this.#sink!;
    if (sink.destroyed) return;
    this.#sentSinceTick = true;
    const connection = last ? undefined : chunkConnection(sink);
    if (connection === undefined) {
      sink.write(frames);
      this.#isUnderWay();
      return;
    }
    this.#connection = connection;
    connection.write(`${Buffer.byteLength(frames).toString(16)}\r\n${frames}\r\n`);
  }

  /** What must drain before more frames are asked for, if anything. */
  #backlog(): FrameSink | Socket | undefined {
    const sink = this.#sink!;
    if (sink.writableNeedDrain) return sink;
    return this.#connection?.writableNeedDrain ? this.#connection : undefined;
  }
}

/**
 * The connection of a response whose frames may be written to it directly, framed as HTTP/1.1
 * chunks (RFC 9112, section 7.1): a server response whose headers went out with chunked transfer
 * coding, that owns its connection (a pipelined response waiting for its turn has none), and with
 * nothing of its own still to go out before them. Otherwise (any other sink, an HTTP/1.0 client
 * whose body ends with the connection) the frames go through the response.
 */
function chunkConnection(sink: FrameSink): Socket | undefined {
  if (!(sink instanceof ServerResponse) || !sink.headersSent || !sink.chunkedEncoding || sink.writableEnded) return undefined;
  const connection = sink.socket;
  // The response's length counts what it holds and what its connection has not sent yet.
  if (connection === null || !connection.writable || sink.writableLength !== 0) return undefined;
  return connection;
}
