/**
 * Usage analytics read from the rollups (usage-rollups.ts): a series of periods, optionally broken
 * down by one dimension, under filters. The dashboard reads them on a connection of its own with a
 * statement time limit (sqlite/dashboard-reader.ts, postgres/dashboard-reader.ts), never on the
 * request path's.
 */
import type { Picos } from '../core/money.ts';
import type { RowFormat } from './row-format.ts';
import { bigintValue, type Row } from './rows.ts';
import { USAGE_GRAINS, USAGE_MEASURES, USAGE_TABLES, type UsageGrain } from './usage-rollups.ts';

/**
 * How long one dashboard statement may run before it is ended with an error: a view that would take
 * longer says so rather than hold a dashboard connection on. Long enough for a month's export by
 * hour on a busy machine; the request path never waits for it (its own pool on PostgreSQL, a worker
 * thread on SQLite).
 */
export const DASHBOARD_STATEMENT_LIMIT_MS = 10_000;

export const USAGE_DIMENSIONS = ['account', 'organization', 'key', 'model', 'provider', 'route', 'status'] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];
export type UsageFilter = Readonly<Partial<Record<UsageDimension, string>>>;

export interface UsageQuery {
  readonly grain: UsageGrain;
  /** The first period: epoch ms, moved back to the start of its hour or day (UTC). */
  readonly from: number;
  /** The end, exclusive. */
  readonly to: number;
  readonly filter: UsageFilter;
  /** A row per period and value of this dimension; null: a row per period. */
  readonly by: UsageDimension | null;
}

export interface UsageFigures {
  readonly requests: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  readonly reasoningTokens: number;
  readonly images: number;
  readonly videoSeconds: number;
  readonly searchUnits: number;
  /** What was charged. */
  readonly cost: Picos;
  /** What cache reads saved against the uncached input price (never charged). */
  readonly cacheSavings: Picos;
}

export interface UsageRow extends UsageFigures {
  /** The period's start (epoch ms). */
  readonly period: number;
  /** The dimension's value ('' for none: no model, a key of an organization under `account`); null without a breakdown. */
  readonly group: string | null;
}

export interface UsageStore {
  /** Periods in order (then groups); periods without usage are absent. */
  usage(query: UsageQuery): Promise<UsageRow[]>;
  /** The same rows made into text by `format` where they are read (a page, an export: row-format.ts). */
  usageText(query: UsageQuery, format: RowFormat): Promise<string>;
}

/** The rollup expression of each dimension. */
const DIMENSION_COLUMNS: Readonly<Record<UsageDimension, string>> = {
  account: "CASE owner_kind WHEN 'account' THEN owner_id ELSE '' END",
  organization: 'organization_id',
  key: 'key_id',
  model: 'model',
  provider: 'provider',
  route: 'route',
  status: 'status',
};

/** The statement of a query, with `placeholder(n)` for its n-th parameter (1-based), and the time limit check if the engine needs one. */
export function usageStatement(query: UsageQuery, placeholder: (index: number) => string, extraCondition = ''): { text: string; values: unknown[] } {
  const size = USAGE_GRAINS[query.grain];
  const values: unknown[] = [query.from - (query.from % size), query.to];
  const conditions = [`period >= ${placeholder(1)}`, `period < ${placeholder(2)}`];
  for (const dimension of USAGE_DIMENSIONS) {
    const value = query.filter[dimension];
    if (value === undefined) continue;
    values.push(value);
    // An account's rows through the owner index, which the CASE of its grouping column would hide from the planner.
    const column = dimension === 'account' && value !== '' ? "owner_kind = 'account' AND owner_id" : DIMENSION_COLUMNS[dimension];
    conditions.push(`${column} = ${placeholder(values.length)}`);
  }
  if (extraCondition) conditions.push(extraCondition);
  const group = query.by === null ? 'NULL' : DIMENSION_COLUMNS[query.by];
  const sums = USAGE_MEASURES.map((measure) => `sum(${measure}) AS ${measure}`).join(', ');
  return {
    text: `SELECT period, ${group} AS grp, ${sums} FROM ${USAGE_TABLES[query.grain]}
           WHERE ${conditions.join(' AND ')}
           GROUP BY period, grp ORDER BY period, grp`,
    values,
  };
}

function count(value: unknown): number {
  return value === null || value === undefined ? 0 : Number(value);
}

export function usageRowFrom(row: Row): UsageRow {
  return {
    period: Number(row.period),
    group: row.grp === null || row.grp === undefined ? null : String(row.grp),
    requests: count(row.requests),
    inputTokens: count(row.input_tokens),
    outputTokens: count(row.output_tokens),
    cacheReadTokens: count(row.cache_read_tokens),
    cacheWriteTokens: count(row.cache_write_tokens),
    reasoningTokens: count(row.reasoning_tokens),
    images: count(row.images),
    videoSeconds: count(row.video_seconds),
    searchUnits: count(row.search_units),
    cost: bigintValue(row.cost),
    cacheSavings: bigintValue(row.cache_savings),
  };
}

/** A dashboard query that ran past its time limit: the page says so instead of waiting on. */
export class UsageQueryTimeout extends Error {
  override readonly name = 'UsageQueryTimeout';
}
