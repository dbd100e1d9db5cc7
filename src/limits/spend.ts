/**
 * The spend limits of a request's key as the ledger checks them with the credit hold
 * (storage/spend.ts, `reserveCapped`): per calendar day and month (UTC) and in total, in exact
 * pico-USD. The amounts are parsed once per cached key; only the period starts move with time.
 */
import type { AuthContext } from '../auth/context.ts';
import { type LimitName, errors } from '../core/errors.ts';
import { type Picos, usdToPicos } from '../core/money.ts';
import type { KeyLimits, SpendCap } from '../storage/store.ts';

const DAY_MS = 86_400_000;

interface Maxima {
  readonly day?: Picos;
  readonly month?: Picos;
  readonly total?: Picos;
}

interface Holders {
  readonly holders: readonly (readonly ['key' | 'organization', Maxima])[];
  /** The caps of the day they were made for (their period starts move only when the day does). */
  day: number;
  caps: readonly SpendCap[];
}

const parsed = new WeakMap<AuthContext, Holders>();
const NO_CAPS: readonly SpendCap[] = [];

/** The caps a hold of this request must fit; empty (and cheap) for a key without spend limits. */
export function spendCapsOf(auth: AuthContext, now: number): readonly SpendCap[] {
  let known = parsed.get(auth);
  if (known === undefined) {
    const key = maximaOf(auth.key.limits);
    const organization = maximaOf(auth.organizationLimits);
    const holders: (readonly ['key' | 'organization', Maxima])[] = [];
    if (key) holders.push(['key', key]);
    if (organization) holders.push(['organization', organization]);
    known = { holders, day: Number.NaN, caps: NO_CAPS };
    parsed.set(auth, known);
  }
  if (known.holders.length === 0) return NO_CAPS;
  const day = dayStart(now);
  if (known.day !== day) {
    known.caps = capsOf(known.holders, day, monthStart(now));
    known.day = day;
  }
  return known.caps;
}

function capsOf(holders: Holders['holders'], day: number, month: number): readonly SpendCap[] {
  const caps: SpendCap[] = [];
  for (const [holder, maxima] of holders) {
    if (maxima.day !== undefined) caps.push({ limit: 'spend_per_day', holder, since: day, max: maxima.day });
    if (maxima.month !== undefined) caps.push({ limit: 'spend_per_month', holder, since: month, max: maxima.month });
    if (maxima.total !== undefined) caps.push({ limit: 'spend_total', holder, since: 0, max: maxima.total });
  }
  return caps;
}

function maximaOf(limits: KeyLimits | null): Maxima | undefined {
  if (!limits) return undefined;
  const { spend_per_day_usd: day, spend_per_month_usd: month, spend_limit_usd: total } = limits;
  if (day === undefined && month === undefined && total === undefined) return undefined;
  return {
    day: day === undefined ? undefined : usdToPicos(day),
    month: month === undefined ? undefined : usdToPicos(month),
    total: total === undefined ? undefined : usdToPicos(total),
  };
}

export function dayStart(now: number): number {
  return now - (now % DAY_MS);
}

export function monthStart(now: number): number {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/** A day after a total limit is reached: waiting does not help, raising the limit does. */
const TOTAL_RETRY_SECONDS = 86_400;

/** The 429 of a hold a cap refused: Retry-After is the start of the next period. */
export function spendLimitError(cap: SpendCap, now: number) {
  const limit: LimitName = cap.limit;
  let retryAfterMs: number;
  switch (cap.limit) {
    case 'spend_per_day':
      retryAfterMs = dayStart(now) + DAY_MS - now;
      break;
    case 'spend_per_month': {
      const date = new Date(now);
      retryAfterMs = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) - now;
      break;
    }
    case 'spend_total':
      retryAfterMs = TOTAL_RETRY_SECONDS * 1000;
      break;
    default: {
      const unknown: never = cap.limit;
      throw new Error(`unknown spend limit ${String(unknown)}`);
    }
  }
  return errors.limitExceeded(limit, cap.holder, Math.max(1, Math.ceil(retryAfterMs / 1000)));
}
