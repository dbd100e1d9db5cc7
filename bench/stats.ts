/**
 * The arithmetic of the report: percentiles of latency samples and comparisons against the
 * baselines measured in the same run. Pure functions, so they can be unit tested.
 */

export interface LatencySummary {
  readonly count: number;
  /** Milliseconds. */
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly mean: number;
  readonly max: number;
}

/**
 * The p-th percentile (0..100) of samples already sorted ascending, interpolating linearly between
 * the two closest ranks (the same definition as numpy's default), so small sample sets do not jump
 * from one sample to the next.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) throw new RangeError('percentile of an empty sample set');
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`);
  const rank = (p / 100) * (sorted.length - 1);
  const lower = Math.floor(rank);
  const upper = Math.ceil(rank);
  const fraction = rank - lower;
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

/** Summary of latency samples in milliseconds; null when there are none. */
export function summarize(samples: ArrayLike<number>): LatencySummary | null {
  if (samples.length === 0) return null;
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    mean: sum / sorted.length,
    max: sorted[sorted.length - 1],
  };
}

/** A share (of the time, say), as the reports print it. */
export function percent(share: number): string {
  return `${(share * 100).toFixed(1)} %`;
}

/** value ÷ baseline; null when either side is missing or the baseline is not positive. */
export function ratio(value: number | null | undefined, baseline: number | null | undefined): number | null {
  if (value === null || value === undefined || baseline === null || baseline === undefined) return null;
  if (!(baseline > 0)) return null;
  return value / baseline;
}

/** value − baseline; null when either side is missing. */
export function difference(value: number | null | undefined, baseline: number | null | undefined): number | null {
  if (value === null || value === undefined || baseline === null || baseline === undefined) return null;
  return value - baseline;
}

/** Grows a Float64Array by doubling, so that recording a sample on the hot path allocates rarely. */
export class SampleBuffer {
  #values = new Float64Array(4096);
  #length = 0;

  push(value: number): void {
    if (this.#length === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2);
      grown.set(this.#values);
      this.#values = grown;
    }
    this.#values[this.#length++] = value;
  }

  get length(): number {
    return this.#length;
  }

  values(): Float64Array {
    return this.#values.subarray(0, this.#length);
  }
}

/** The median of `values` (the mean of the middle two when their count is even). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = (sorted.length - 1) / 2;
  return (sorted[Math.floor(middle)]! + sorted[Math.ceil(middle)]!) / 2;
}

/** The median time in milliseconds of `repeats` calls of `read`, after one unmeasured call that warms it. */
export async function medianMillis(read: () => Promise<unknown>, repeats: number): Promise<number> {
  await read();
  const times: number[] = [];
  for (let index = 0; index < repeats; index += 1) {
    const started = performance.now();
    await read();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}
