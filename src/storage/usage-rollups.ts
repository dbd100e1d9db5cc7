/**
 * The usage rollups (docs/dashboard.md, "Usage"): request log rows summed per hour and per day by
 * owner, key, model, provider endpoint, endpoint family (route) and status. Both engines keep them
 * up as request log rows are written, in the same commit (SQLite: the batch's sums, one upsert per
 * rollup row, sqlite/rollups.ts; PostgreSQL: the batch insert's own statement), so a usage page
 * reads rollups, never request rows.
 */

export const USAGE_GRAINS = { hour: 3_600_000, day: 86_400_000 } as const;
export type UsageGrain = keyof typeof USAGE_GRAINS;

export const USAGE_TABLES: Readonly<Record<UsageGrain, string>> = { hour: 'usage_hourly', day: 'usage_daily' };

/** The summed columns of a rollup row, each the sum of the request log column of the same name (requests: a count). */
export const USAGE_MEASURES = [
  'requests',
  'input_tokens',
  'output_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'reasoning_tokens',
  'images',
  'video_seconds',
  'search_units',
  'cost',
  'cache_savings',
] as const;
export type UsageMeasure = (typeof USAGE_MEASURES)[number];

/** The key columns besides the period; '' stands for none (a NULL would never match ON CONFLICT). */
export const USAGE_KEY_COLUMNS = ['owner_kind', 'owner_id', 'key_id', 'model', 'provider', 'route', 'status'] as const;

/** The request log columns a rollup reads (a request counts as one of `requests`). */
export const ROLLED_UP_COLUMNS = ['created_at', ...USAGE_KEY_COLUMNS, ...USAGE_MEASURES.filter((measure) => measure !== 'requests')] as const;

/**
 * Statements that add the request rows of `source` (a table or a CTE with the request log's
 * columns) into both rollups, as `WITH`-able parts ending in a plain INSERT: PostgreSQL's batch
 * insert, and a summing of a whole table on either engine (the dashboard benchmark's fill). Rows are added in
 * key order, so that concurrent batches of several instances lock rollup rows in one order and
 * never deadlock.
 */
export function rollupInserts(source: string): { readonly hourly: string; readonly daily: string } {
  const insert = (grain: UsageGrain) => {
    const size = USAGE_GRAINS[grain];
    const keys = ['period', ...USAGE_KEY_COLUMNS];
    const sums = USAGE_MEASURES.map((measure) => (measure === 'requests' ? 'count(*)' : `sum(r.${measure})`));
    return `INSERT INTO ${USAGE_TABLES[grain]} (${keys.join(', ')}, organization_id, ${USAGE_MEASURES.join(', ')})
      SELECT r.created_at - r.created_at % ${size}, r.owner_kind, r.owner_id, r.key_id, coalesce(r.model, ''), coalesce(r.provider, ''), r.route, r.status,
        CASE r.owner_kind WHEN 'organization' THEN r.owner_id ELSE coalesce(a.organization_id, '') END,
        ${sums.join(', ')}
      FROM ${source} r LEFT JOIN accounts a ON r.owner_kind = 'account' AND a.id = r.owner_id
      GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
      ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
      ON CONFLICT (${keys.join(', ')}) DO UPDATE SET ${USAGE_MEASURES.map((measure) => `${measure} = ${USAGE_TABLES[grain]}.${measure} + excluded.${measure}`).join(', ')}`;
  };
  return { hourly: insert('hour'), daily: insert('day') };
}

/**
 * SQLite: adds one rollup row's sums (sqlite/rollups.ts) into the rollup of `grain`. Parameters: the
 * period, the key columns in USAGE_KEY_COLUMNS order, then the sums in USAGE_MEASURES order.
 */
export function sqliteRollupUpsert(grain: UsageGrain): string {
  const keys = ['period', ...USAGE_KEY_COLUMNS];
  const [ownerKind, ownerId] = [keys.indexOf('owner_kind') + 1, keys.indexOf('owner_id') + 1];
  const measures = USAGE_MEASURES.map((_, index) => `?${keys.length + index + 1}`);
  return `INSERT INTO ${USAGE_TABLES[grain]} (${keys.join(', ')}, organization_id, ${USAGE_MEASURES.join(', ')})
    VALUES (${keys.map((_, index) => `?${index + 1}`).join(', ')},
      CASE ?${ownerKind} WHEN 'organization' THEN ?${ownerId} ELSE coalesce((SELECT organization_id FROM accounts WHERE id = ?${ownerId}), '') END,
      ${measures.join(', ')})
    ON CONFLICT (${keys.join(', ')}) DO UPDATE SET ${USAGE_MEASURES.map((measure) => `${measure} = ${measure} + excluded.${measure}`).join(', ')}`;
}
