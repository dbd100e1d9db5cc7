/**
 * A server's stop in two steps (docs/operations.md, "Graceful drain"): draining — health answers
 * 503 `draining`, new requests are refused with a retryable 503, in-flight work goes on — then, at
 * the deadline or on a second signal, the streams still running are cut: each ends with an in-stream
 * error and is settled for what it delivered, and then the connections still open are closed.
 */
import { errors } from '../core/errors.ts';
import type { StreamsCut } from '../pipeline/pipeline.ts';

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

export class Drain {
  #draining = false;
  readonly #cut = new AbortController();
  /** Streams begun and not yet ended. */
  #open = 0;
  #lastEnded: (() => void) | undefined;
  /** What the pipeline's streams see of the drain (pipeline/text-stream.ts). */
  readonly streamsCut: StreamsCut = { signal: this.#cut.signal, opened: () => this.#opened() };

  get draining(): boolean {
    return this.#draining;
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
    if (this.#cut.signal.aborted) return;
    this.#draining = true;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      clearTimeout(backstop);
      closeConnections(this.#open);
    };
    const backstop = setTimeout(close, CUT_BACKSTOP_MS);
    backstop.unref();
    const afterGrace = () => setTimeout(close, CUT_GRACE_MS).unref();
    this.#cut.abort(errors.shuttingDown());
    if (this.#open === 0) afterGrace();
    else this.#lastEnded = afterGrace;
  }

  #opened(): () => void {
    this.#open++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#open--;
      if (this.#open === 0) this.#lastEnded?.();
    };
  }
}
