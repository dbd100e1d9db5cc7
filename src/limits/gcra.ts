/**
 * The arithmetic of a per-minute limit: GCRA, the generic cell rate algorithm, written as its
 * equivalent leaky bucket ("virtual scheduling" and "leaky bucket" are the same test; RFC 2475 and
 * https://brandur.org/rate-limiting describe it). A limit of N units per minute is a bucket of N
 * units that drains continuously at N per minute: a request of `cost` units is admitted when it
 * fits in what the bucket has free, so N requests may arrive at once, and after that one more
 * every 60/N seconds.
 *
 * Exact in integers: the level is kept in unit·milliseconds (one unit weighs WINDOW_MS), so the
 * bucket drains `limit` per millisecond and nothing is ever divided until a header is printed.
 * test/limits/gcra.test.ts checks the edges.
 */

/** The window every limit is expressed over. */
export const WINDOW_MS = 60_000;

/** A bucket's state: its level (unit·ms) at a time (epoch ms). An absent bucket is empty. */
export interface BucketState {
  readonly level: number;
  readonly at: number;
}

export interface BucketVerdict {
  readonly admitted: boolean;
  /** The state to keep (unchanged when refused, apart from the drain, which changes nothing real). */
  readonly state: BucketState;
  /** Whole units still free after this request. */
  readonly remaining: number;
  /** Milliseconds until the bucket is empty again (the `reset` headers). */
  readonly resetMs: number;
  /** When refused: milliseconds until `cost` units fit; 0 when admitted. */
  readonly retryAfterMs: number;
}

/** The level at `now`: what is left after draining since the last change. */
export function drained(state: BucketState | undefined, limit: number, now: number): number {
  if (!state) return 0;
  const elapsed = Math.max(0, now - state.at);
  const leaked = elapsed * limit;
  // After a long idle time the product passes 2^53 and is inexact, but then far above any level.
  return leaked >= state.level ? 0 : state.level - leaked;
}

/**
 * Takes `cost` units from a bucket of `limit` units per minute when they fit. With `check` the
 * state is left as it was even when they fit (a pre-check: tokens are counted at settlement).
 */
export function take(state: BucketState | undefined, limit: number, cost: number, now: number, check = false): BucketVerdict {
  const capacity = limit * WINDOW_MS;
  const level = drained(state, limit, now);
  const needed = level + cost * WINDOW_MS;
  if (needed <= capacity) {
    const after = check ? level : needed;
    return {
      admitted: true,
      state: { level: check ? level : needed, at: now },
      remaining: Math.floor((capacity - needed) / WINDOW_MS),
      resetMs: Math.ceil(after / limit),
      retryAfterMs: 0,
    };
  }
  return {
    admitted: false,
    state: { level, at: now },
    remaining: Math.floor((capacity - level) / WINDOW_MS),
    resetMs: Math.ceil(level / limit),
    retryAfterMs: waitFor(level, limit, cost),
  };
}

/**
 * How long until `cost` units fit a bucket of `limit` per minute that is at `level` now: 0 when they
 * fit now, else at least 1 ms. A cost above the whole limit never fits: the wait is then until the
 * bucket is empty.
 */
export function waitFor(level: number, limit: number, cost: number): number {
  const excess = level + cost * WINDOW_MS - limit * WINDOW_MS;
  return excess <= 0 ? 0 : Math.max(1, Math.ceil(Math.min(excess, level) / limit));
}

/** Adds `cost` units without a check (tokens counted at settlement may overfill the bucket). */
export function add(state: BucketState | undefined, limit: number, cost: number, now: number): BucketState {
  return { level: drained(state, limit, now) + cost * WINDOW_MS, at: now };
}

/**
 * A duration as the `x-ratelimit-reset-*` headers print it: the Go-style form the OpenAI API
 * sends (`20ms`, `1s`, `6m0s`; https://platform.openai.com/docs/guides/rate-limits).
 */
export function resetText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const seconds = Math.ceil(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  return `${Math.floor(seconds / 60)}m${seconds % 60}s`;
}

/** Retry-After in whole seconds, never 0 (a client told 0 retries at once into the same refusal). */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
