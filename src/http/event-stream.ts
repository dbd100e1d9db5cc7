/**
 * The two HTTP concerns every dialect route shares: noticing that the client went away (so the
 * upstream call is aborted and a stream is settled for what was used), and sending server-sent
 * events with back-pressure.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
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
  readonly #streams = new Set<KeptAlive>();
  #timer: NodeJS.Timeout | undefined;

  constructor(everyMs: number, frame: string) {
    this.#everyMs = everyMs;
    this.#frame = frame;
  }

  watch(stream: KeptAlive): void {
    this.#streams.add(stream);
    this.#timer ??= setInterval(this.#tick, this.#everyMs / 2).unref();
  }

  /** Idempotent. */
  unwatch(stream: KeptAlive): void {
    this.#streams.delete(stream);
  }

  readonly #tick = (): void => {
    if (this.#streams.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    for (const stream of this.#streams) stream.tick(this.#frame);
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
 */
export function sendEventStream<Event>(
  reply: FastifyReply,
  events: AsyncIterable<readonly Event[]>,
  encode: (event: Event) => string,
  keepAlive?: KeepAlive,
): FastifyReply {
  return (
    reply
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-cache')
      // Reverse proxies must not buffer the stream.
      .header('x-accel-buffering', 'no')
      .send(new BatchedFrames(events, encode, keepAlive))
  );
}

/**
 * A body that sends the frames of every event ready in one turn of the event loop as one chunk. Upstreams often
 * deliver several events in one network read (and a busy gateway reads several at once); written
 * one by one, each frame would cost its own socket write and system call, which profiles showed
 * as the largest single cost of a stream. Frames that arrive apart in time still leave at once:
 * the batch is flushed as soon as the loop turn that produced it ends.
 */
export class BatchedFrames<Event> extends Readable {
  readonly #events: AsyncIterator<readonly Event[]>;
  readonly #encode: (event: Event) => string;
  #batch = '';
  #flushScheduled = false;
  /** Set while the consumer's buffer is full; resolved by the next `_read`. */
  #wake: (() => void) | undefined;
  #consumerFull = false;
  readonly #keepAlive: KeepAlive | undefined;
  /** Whether anything was sent since the keep-alive's last tick; its start counts, so the first tick sends nothing. */
  #sentSinceTick = true;

  constructor(events: AsyncIterable<readonly Event[]>, encode: (event: Event) => string, keepAlive?: KeepAlive) {
    super();
    this.#events = events[Symbol.asyncIterator]();
    this.#encode = encode;
    this.#keepAlive = keepAlive;
    keepAlive?.watch(this);
    void this.#pump();
  }

  /** A tick of the keep-alive: its frame goes out if nothing else did since the tick before. */
  tick(frame: string): void {
    if (this.#sentSinceTick) {
      this.#sentSinceTick = false;
      return;
    }
    // A batch about to be flushed, or one the client has not read yet, breaks the silence itself.
    if (this.destroyed || this.#consumerFull || this.#batch !== '') return;
    this.#sentSinceTick = true;
    if (!this.push(frame)) this.#consumerFull = true;
  }

  override _read(): void {
    this.#consumerFull = false;
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#keepAlive?.unwatch(this);
    // Stopping the events stops the run behind them: the upstream is aborted and what was used is settled.
    this.#wake?.();
    Promise.resolve(this.#events.return?.()).then(
      () => callback(error),
      (failure: unknown) => callback(error ?? (failure as Error)),
    );
  }

  async #pump(): Promise<void> {
    try {
      while (!this.destroyed) {
        if (this.#consumerFull) {
          await new Promise<void>((resolve) => (this.#wake = resolve));
          if (this.destroyed) break;
        }
        const step = await this.#events.next();
        if (step.done || this.destroyed) break;
        for (const event of step.value) this.#batch += this.#encode(event);
        if (!this.#flushScheduled) {
          this.#flushScheduled = true;
          setImmediate(this.#flush);
        }
      }
      this.#keepAlive?.unwatch(this);
      if (!this.destroyed) {
        this.#flush();
        this.push(null);
      }
    } catch (error) {
      this.destroy(error as Error);
    }
  }

  readonly #flush = (): void => {
    this.#flushScheduled = false;
    if (this.#batch === '' || this.destroyed) return;
    const batch = this.#batch;
    this.#batch = '';
    this.#sentSinceTick = true;
    if (!this.push(batch)) this.#consumerFull = true;
  };
}
