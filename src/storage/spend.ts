/**
 * The check both ledgers make for a capped hold (docs/limits.md), on sums each reads its own way
 * while nothing else can change them: a cap passes when what was charged since its time, plus what
 * is held open, plus the new hold stays within its maximum. Money is exact: pico-USD bigints.
 */
import type { CappedReservation, SpendCap } from './store.ts';

const timesOfCaps = new WeakMap<readonly SpendCap[], readonly [number, number, number]>();

/**
 * The (up to three) times the caps count from, padded with 0, so one statement reads every sum;
 * worked out once per list (a key's caps are one list per day, limits/spend.ts).
 */
export function capTimes(caps: readonly SpendCap[]): readonly [number, number, number] {
  let times = timesOfCaps.get(caps);
  if (times === undefined) {
    const distinct = [...new Set(caps.map((cap) => cap.since))];
    if (distinct.length > 3) throw new RangeError('at most three distinct spend cap times');
    while (distinct.length < 3) distinct.push(0);
    times = distinct as [number, number, number];
    timesOfCaps.set(caps, times);
  }
  return times;
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
