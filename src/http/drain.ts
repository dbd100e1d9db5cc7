/**
 * A server's stop in two steps (docs/operations.md, "Graceful drain"): draining — health answers
 * 503 `draining`, new requests are refused with a retryable 503, in-flight work goes on — then, at
 * the deadline or on a second signal, the streams still running are cut: each ends with an in-stream
 * error and is settled for what it delivered, and then the connections still open are closed.
 */
import { errors, type GatewayError } from '../core/errors.ts';
import { type Link, LinkedList } from '../core/linked-list.ts';
import type { CuttableStream, StreamsCut } from '../pipeline/pipeline.ts';

/** Answered while the server drains too: 503 `draining` tells a load balancer to stop sending. */
export const HEALTH_PATH = '/healthz';

/** How long the connections stay open after the last cut stream ended: its last frames go out. */
export const CUT_GRACE_MS = 1_000;
/**
 * The longest the connections wait for the cut streams to end. A cut stream ends once it is settled
 * (a database write; on a busy machine the tokenizer's first load can take seconds), and one whose
 * client stopped reading ends only when the client reads again.
 */
export const CUT_BACKSTOP_MS = 10_000;

export class Drain implements StreamsCut {
  #draining = false;
  /** The error the streams were cut with, once they were. */
  #cutWith: GatewayError | undefined;
  /** Streams begun and not yet ended (a list, not a `Set`: core/linked-list.ts). */
  readonly #open = new LinkedList<CuttableStream>();
  #lastEnded: (() => void) | undefined;

  /** A stream began (pipeline/text-stream.ts): it joins the list of open streams, until it has ended. */
  opened(stream: CuttableStream): Link<CuttableStream> {
    return this.#open.add(stream);
  }

  ended(link: Link<CuttableStream>): void {
    if (!link.listed) return;
    link.remove();
    if (this.#open.size === 0) this.#lastEnded?.();
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** The error the streams were cut with, once they were. */
  get cutWith(): GatewayError | undefined {
    return this.#cutWith;
  }

  begin(): void {
    this.#draining = true;
  }

  /**
   * Cuts the streams still running, and calls `closeConnections` once every one of them has ended
   * and CUT_GRACE_MS has passed, or at CUT_BACKSTOP_MS after the cut, whichever comes first. Once;
   * with the number of cut streams that had not ended then (0 unless the backstop came first).
   */
  cutStreams(closeConnections: (unended: number) => void): void {
    if (this.#cutWith !== undefined) return;
    this.#draining = true;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      clearTimeout(backstop);
      closeConnections(this.#open.size);
    };
    const backstop = setTimeout(close, CUT_BACKSTOP_MS);
    backstop.unref();
    const afterGrace = () => setTimeout(close, CUT_GRACE_MS).unref();
    const reason = errors.shuttingDown();
    this.#cutWith = reason;
    if (this.#open.size === 0) afterGrace();
    else this.#lastEnded = afterGrace;
    for (const stream of [...this.#open]) stream.cut(reason);
  }
}
