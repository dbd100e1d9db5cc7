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
 * A frame sent when nothing else was for `everyMs`, so that proxies and clients with idle timeouts
 * keep a silent stream open (the messages dialect's `ping` events).
 */
export interface KeepAlive {
  readonly everyMs: number;
  readonly frame: string;
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
  /** Re-armed by every batch sent, so it fires only after a silence. */
  readonly #keepAlive: NodeJS.Timeout | undefined;

  constructor(events: AsyncIterable<readonly Event[]>, encode: (event: Event) => string, keepAlive?: KeepAlive) {
    super();
    this.#events = events[Symbol.asyncIterator]();
    this.#encode = encode;
    this.#keepAlive = keepAlive && setInterval(() => this.#sendKeepAlive(keepAlive.frame), keepAlive.everyMs);
    void this.#pump();
  }

  #sendKeepAlive(frame: string): void {
    // A batch about to be flushed, or one the client has not read yet, breaks the silence itself.
    if (this.destroyed || this.#consumerFull || this.#batch !== '') return;
    if (!this.push(frame)) this.#consumerFull = true;
  }

  override _read(): void {
    this.#consumerFull = false;
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    clearInterval(this.#keepAlive);
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
      clearInterval(this.#keepAlive);
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
    this.#keepAlive?.refresh();
    if (!this.push(batch)) this.#consumerFull = true;
  };
}
