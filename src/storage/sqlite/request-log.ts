/**
 * The request log on SQLite: a batch is one unit of reused single-row inserts in the group commit
 * (database.ts), committed together with the ledger writes of the same milliseconds, and with the
 * batch's sums added into the usage rollups (rollups.ts).
 */
import { REQUEST_LOG_COLUMNS as COLUMNS, requestColumns, requestFromRow, USAGE_AGGREGATES, usageFromRow, jsonText, type Row } from '../rows.ts';
import type { RequestLogStore } from '../store.ts';
import type { SqliteDatabase } from './database.ts';
import { expiredRowsDeleter } from './expiry.ts';
import { RollupSums } from './rollups.ts';
import { sqliteRollupUpsert } from '../usage-rollups.ts';

export function sqliteRequestLog(database: SqliteDatabase): RequestLogStore {
  // A record written twice (a retried batch) keeps its first version. Positional parameters: binding
  // by name costs a lookup per column on every row.
  const insert = database.prepare(
    `INSERT INTO request_log (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})
     ON CONFLICT (id) DO NOTHING`,
  );
  const byId = database.prepare('SELECT * FROM request_log WHERE id = ?', { bigints: true });
  const summary = database.prepare(
    `SELECT model, ${USAGE_AGGREGATES}
     FROM request_log
     WHERE owner_kind = ? AND owner_id = ? AND created_at >= ?
     GROUP BY model ORDER BY model NULLS LAST`,
    { bigints: true },
  );
  const deleteExpired = expiredRowsDeleter(database, 'request_log');
  const rollupUpserts = { hour: database.prepare(sqliteRollupUpsert('hour')), day: database.prepare(sqliteRollupUpsert('day')) };

  return {
    async recordRequests(records) {
      if (records.length === 0) return;
      const rows = records.map((record) => {
        const columns = requestColumns(record);
        const values = {
          ...columns,
          stream: columns.stream ? 1 : 0,
          output: jsonText(columns.output),
          blob_keys: JSON.stringify(columns.blob_keys),
        };
        return { columns, values: COLUMNS.map((column) => values[column]) };
      });
      await database.grouped(() => {
        const rollups = new RollupSums();
        // A row already written (a retried batch) is not counted again.
        for (const { columns, values } of rows) if (insert.run(...values).changes > 0) rollups.add(columns);
        for (const { grain, key, sums } of rollups.rows()) rollupUpserts[grain].run(...key, ...sums);
      });
    },
    async getRequest(id) {
      const row = byId.get(id) as Row | undefined;
      return row ? requestFromRow(row) : null;
    },
    async usageSummary(owner, since) {
      return (summary.all(owner.kind, owner.id, since) as Row[]).map(usageFromRow);
    },
    deleteExpiredRequests: deleteExpired,
  };
}
