/**
 * A server's stop in two steps (docs/operations.md, "Graceful drain"): draining — health answers
 * 503 `draining`, new requests are refused with a retryable 503, in-flight work goes on — then, at
 * the deadline or on a second signal, the streams still running are cut: each ends with an in-stream
 * error and is settled for what it delivered.
 */
import { errors } from '../core/errors.ts';

/** Answered while the server drains too: 503 `draining` tells a load balancer to stop sending. */
export const HEALTH_PATH = '/healthz';

export class Drain {
  #draining = false;
  readonly #cut = new AbortController();

  get draining(): boolean {
    return this.#draining;
  }

  /** Aborted, with the error the streams end with, when they are cut (pipeline/text-stream.ts). */
  get streamsCut(): AbortSignal {
    return this.#cut.signal;
  }

  begin(): void {
    this.#draining = true;
  }

  cutStreams(): void {
    this.#draining = true;
    this.#cut.abort(errors.shuttingDown());
  }
}
