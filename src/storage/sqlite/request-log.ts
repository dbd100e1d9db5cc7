/**
 * The request log on SQLite: a batch is one unit of reused single-row inserts in the group commit
 * (database.ts), committed together with the ledger writes of the same milliseconds.
 */
import { REQUEST_LOG_COLUMNS as COLUMNS, requestColumns, requestFromRow, USAGE_AGGREGATES, usageFromRow, jsonText, type Row } from '../rows.ts';
import type { RequestLogStore } from '../store.ts';
import type { SqliteDatabase } from './database.ts';
import { expiredRowsDeleter } from './expiry.ts';

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
        return COLUMNS.map((column) => values[column]);
      });
      await database.grouped(() => {
        for (const row of rows) insert.run(...row);
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
