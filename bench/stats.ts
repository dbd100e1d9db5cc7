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

/**
 * Two builds measured in the same rounds, each round's figures paired: how often the second
 * measured lower than the first, and whether that split could be chance. On a shared machine a
 * difference of medians alone says little (single rounds of one build move by tens of percent);
 * the sign test asks only which of the two was lower in each round, so a slow phase of the host that
 * weighs on both alike changes nothing.
 */
export interface PairedComparison {
  readonly rounds: number;
  /** Rounds where the second measured lower, and higher, than the first (ties count in neither). */
  readonly lower: number;
  readonly higher: number;
  /** The median of the rounds' differences, second − first. */
  readonly medianDifference: number;
  /**
   * The two-sided sign test's p-value: the chance that two builds that cost the same split the
   * rounds at least this unevenly. Below 0.05, the difference is the builds', not the machine's.
   */
  readonly signTestP: number;
}

export function comparePaired(first: readonly number[], second: readonly number[]): PairedComparison {
  if (first.length !== second.length || first.length === 0) throw new RangeError('paired figures need the same, non-zero number of rounds');
  const differences = second.map((value, index) => value - first[index]!);
  const lower = differences.filter((difference) => difference < 0).length;
  const higher = differences.filter((difference) => difference > 0).length;
  return { rounds: first.length, lower, higher, medianDifference: median(differences), signTestP: signTest(lower, higher) };
}

/** Two-sided: twice the probability of a split at least as uneven, of fair coins. */
function signTest(lower: number, higher: number): number {
  const trials = lower + higher;
  const fewer = Math.min(lower, higher);
  let term = 0.5 ** trials;
  let tail = 0;
  for (let count = 0; count <= fewer; count++) {
    tail += term;
    term = (term * (trials - count)) / (count + 1);
  }
  return Math.min(1, 2 * tail);
}

/** One line for a report: `after − before: median -12.3 µs; lower in 9 of 10 rounds, higher in 1 (sign test p = 0.021)`. */
export function describePaired(
  comparison: PairedComparison,
  names: { readonly first: string; readonly second: string },
  format: (value: number) => string,
): string {
  const { rounds, lower, higher, medianDifference, signTestP } = comparison;
  const sign = medianDifference > 0 ? '+' : '';
  return `${names.second} − ${names.first}: median ${sign}${format(medianDifference)}; lower in ${lower} of ${rounds} rounds, higher in ${higher} (sign test p = ${signTestP.toFixed(3)})`;
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
