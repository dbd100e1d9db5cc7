/**
 * The `usage` the admin API shows beside a key's or an organization's limits (docs/limits.md):
 * where each counter stands (read without counting anything) and what was spent in each period,
 * from the ledger, with what is held open. Null without limits.
 */
import { formatUsd } from '../core/money.ts';
import type { Limiter } from '../limits/limiter.ts';
import { dayStart, monthStart } from '../limits/spend.ts';
import type { KeyLimits, LedgerStore, OwnerRef } from '../storage/store.ts';

export type LimitHolder = { readonly kind: 'key'; readonly id: string } | { readonly kind: 'organization'; readonly owner: OwnerRef };

export async function limitUsage(
  ledger: LedgerStore,
  limiter: Limiter,
  holder: LimitHolder,
  limits: KeyLimits | null,
  now: number,
): Promise<Record<string, unknown> | null> {
  if (!limits || Object.keys(limits).length === 0) return null;
  const usage: Record<string, unknown> = {};
  const id = holder.kind === 'key' ? holder.id : holder.owner.id;
  // The counters may be away (Redis): the spend is the database's and is shown regardless.
  const counters = await limiter.usage(holder.kind, id, limits).catch(() => []);
  for (const counter of counters) {
    usage[counter.limit] =
      counter.limit === 'concurrent_requests'
        ? { limit: counter.max, in_use: counter.max - counter.remaining }
        : { limit: counter.max, remaining: counter.remaining, reset_seconds: counter.resetSeconds };
  }
  const periods = [
    ['spend_per_day_usd', dayStart(now)],
    ['spend_per_month_usd', monthStart(now)],
    ['spend_limit_usd', 0],
  ] as const;
  if (periods.some(([field]) => limits[field] !== undefined)) {
    const times = periods.map(([, since]) => since) as [number, number, number];
    const spent = await ledger.spentBy(holder.kind === 'key' ? { keyId: holder.id } : { owner: holder.owner }, times);
    periods.forEach(([field], index) => {
      const limit = limits[field];
      if (limit !== undefined) usage[field] = { limit, spent_usd: formatUsd(spent.since[index]), held_usd: formatUsd(spent.held) };
    });
  }
  return usage;
}
