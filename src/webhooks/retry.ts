/**
 * When a failed delivery is tried again: exponential backoff, capped, with jitter. The delay after
 * the n-th failed attempt is drawn between half and all of min(cap, base × 2^(n−1)), so retries of
 * many deliveries that failed together (an endpoint that was down) spread out instead of arriving
 * together, and each still waits at least half its step. The retries stop 24 hours after the event
 * (WEBHOOK_RETRY_WINDOW_MS in src/storage/rows.ts; the store marks the delivery failed).
 */
export interface RetrySchedule {
  readonly baseMs: number;
  readonly maxMs: number;
}

/** The delay before the next attempt, after `attempts` attempts (1 or more) have failed. `random` is in [0, 1). */
export function retryDelayMs(attempts: number, schedule: RetrySchedule, random: () => number = Math.random): number {
  // 2^30 is far past any cap; bounding the exponent keeps the arithmetic finite and exact.
  const step = Math.min(schedule.maxMs, schedule.baseMs * 2 ** Math.min(Math.max(attempts, 1) - 1, 30));
  return Math.ceil(step / 2 + (step / 2) * random());
}
