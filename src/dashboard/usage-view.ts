/**
 * What a usage view asks for, read from a page's query string: the grain, the period, the filters
 * and the breakdown. A member's view is always narrowed to their own account or organization,
 * whatever the query says (docs/dashboard.md, "Usage").
 */
import { errors } from '../core/errors.ts';
import type { User } from '../storage/people.ts';
import type { RequestStatus } from '../storage/store.ts';
import { USAGE_DIMENSIONS, type UsageDimension, type UsageFilter, type UsageQuery } from '../storage/usage.ts';
import { USAGE_GRAINS, type UsageGrain } from '../storage/usage-rollups.ts';

const DAY = USAGE_GRAINS.day;
/** The longest period of a view, per grain: enough for a month of hours and a year of days. */
const LONGEST: Readonly<Record<UsageGrain, number>> = { hour: 31 * DAY, day: 366 * DAY };
/** The period a view shows when it names none: the last 30 days, today included. */
const DEFAULT_DAYS = 30;

export const ENDPOINT_FAMILIES = ['chat', 'messages', 'responses', 'embeddings', 'images.generations', 'images.edits', 'videos.generations'] as const;
export const STATUSES: readonly RequestStatus[] = ['completed', 'incomplete', 'failed', 'cancelled'];

export const DIMENSION_LABELS: Readonly<Record<UsageDimension, string>> = {
  account: 'Account',
  organization: 'Organization',
  key: 'Key',
  model: 'Model',
  provider: 'Provider endpoint',
  route: 'Endpoint family',
  status: 'Status',
};

export interface UsageView {
  readonly query: UsageQuery;
  /** The first and last day of the period as the form shows them (YYYY-MM-DD, the last included). */
  readonly fromDay: string;
  readonly toDay: string;
  /** The filters the viewer cannot change (a member's own account or organization). */
  readonly fixed: ReadonlySet<UsageDimension>;
}

function dayOf(millis: number): string {
  return new Date(millis).toISOString().slice(0, 10);
}

function parseDay(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const millis = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : Number.NaN;
  if (Number.isNaN(millis)) throw errors.invalidValue(null, `"${value}" is not a date (YYYY-MM-DD).`);
  return millis;
}

export function usageView(query: Readonly<Record<string, string | undefined>>, user: User, now: number): UsageView {
  const grain: UsageGrain = query.grain === 'hour' ? 'hour' : 'day';
  const today = now - (now % DAY);
  const from = parseDay(query.from, today - (DEFAULT_DAYS - 1) * DAY);
  const to = parseDay(query.to, today) + DAY;
  if (to <= from) throw errors.invalidValue(null, 'The period ends before it begins.');
  if (to - from > LONGEST[grain]) {
    throw errors.invalidValue(
      null,
      `A view by ${grain} covers at most ${LONGEST[grain] / DAY} days: choose a shorter period${grain === 'hour' ? ', or view it by day' : ''}.`,
    );
  }
  const filter: Partial<Record<UsageDimension, string>> = {};
  for (const dimension of USAGE_DIMENSIONS) {
    const value = query[dimension]?.trim();
    if (value) filter[dimension] = value;
  }
  const fixed = new Set<UsageDimension>();
  if (user.role.kind === 'member') {
    const own = user.role.owner;
    const dimension = own.kind === 'account' ? 'account' : 'organization';
    filter[dimension] = own.id;
    fixed.add(dimension);
  }
  const by = USAGE_DIMENSIONS.find((dimension) => dimension === query.by) ?? null;
  return { query: { grain, from, to, filter, by }, fromDay: dayOf(from), toDay: dayOf(to - DAY), fixed };
}

/** The query string of a view, for links (the CSV export, the other grain). */
export function viewSearch(view: UsageView, overrides: Readonly<Record<string, string>> = {}): string {
  const filter: UsageFilter = view.query.filter;
  const entries: [string, string][] = [
    ['grain', view.query.grain],
    ['from', view.fromDay],
    ['to', view.toDay],
    ...(view.query.by ? ([['by', view.query.by]] as [string, string][]) : []),
    ...USAGE_DIMENSIONS.filter((dimension) => filter[dimension] !== undefined && !view.fixed.has(dimension)).map(
      (dimension) => [dimension, filter[dimension]!] as [string, string],
    ),
  ];
  const search = new URLSearchParams(entries);
  for (const [name, value] of Object.entries(overrides)) search.set(name, value);
  return search.toString();
}
