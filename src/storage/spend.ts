/**
 * The check both ledgers make for a capped hold (docs/limits.md), on sums each reads its own way
 * while nothing else can change them: a cap passes when what was charged since its time, plus what
 * is held open, plus the new hold stays within its maximum. Money is exact: pico-USD bigints.
 */
import type { CappedReservation, SpendCap } from './store.ts';

/** The (up to three) times the caps count from, padded with 0, so one statement reads every sum. */
export function capTimes(caps: readonly SpendCap[]): [number, number, number] {
  const times = [...new Set(caps.map((cap) => cap.since))];
  if (times.length > 3) throw new RangeError('at most three distinct spend cap times');
  while (times.length < 3) times.push(0);
  return times as [number, number, number];
}

/** What a holder has spent: charged since each of capTimes(caps), and held open now. */
export interface Spent {
  readonly since: readonly [bigint, bigint, bigint];
  readonly held: bigint;
}

/** The first cap the hold does not fit, as the refusal to return; undefined when all fit. */
export function firstRefusal(
  caps: readonly SpendCap[],
  amount: bigint,
  spentBy: { readonly key?: Spent; readonly organization?: Spent },
): CappedReservation | undefined {
  const times = capTimes(caps);
  for (const cap of caps) {
    const facts = spentBy[cap.holder];
    // A key cap on a hold made without a key has nothing to count.
    if (!facts) continue;
    const spent = facts.since[times.indexOf(cap.since)] + facts.held;
    if (spent + amount > cap.max) return { refused: 'cap', cap, spent };
  }
  return undefined;
}
