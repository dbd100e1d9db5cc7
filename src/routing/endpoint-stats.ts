/**
 * What this instance observed of one endpoint: its recent latencies, times to first byte and
 * stream throughputs (the last SAMPLES of each, so percentiles follow the endpoint as it changes),
 * and its last error. Shown at GET /admin/v1/endpoints and used by `provider.sort`.
 */

/** Samples kept per measure. */
const SAMPLES = 256;

/** A ring of the latest samples of one measure. */
export class SampleRing {
  readonly #values = new Float64Array(SAMPLES);
  #count = 0;

  add(value: number): void {
    this.#values[this.#count % SAMPLES] = value;
    this.#count++;
  }

  get size(): number {
    return Math.min(this.#count, SAMPLES);
  }

  /** The nearest-rank percentiles (0–100) of the samples, or undefined with none. */
  percentiles(ranks: readonly number[]): number[] | undefined {
    const size = this.size;
    if (size === 0) return undefined;
    const sorted = this.#values.slice(0, size).sort();
    return ranks.map((rank) => sorted[Math.min(size - 1, Math.max(0, Math.ceil((rank / 100) * size) - 1))]);
  }
}

export interface LastError {
  readonly code: string | null;
  readonly message: string;
  /** Epoch ms. */
  readonly at: number;
}

export class EndpointStats {
  /** A whole attempt, from its start to its answer (a stream: to its last event). */
  readonly latencyMs = new SampleRing();
  /** From an attempt's start to its first event (a plain answer: the whole answer). */
  readonly firstByteMs = new SampleRing();
  /** Output tokens per second of a stream, after its first event. */
  readonly throughputTps = new SampleRing();
  succeeded = 0;
  failed = 0;
  lastError: LastError | null = null;
}
