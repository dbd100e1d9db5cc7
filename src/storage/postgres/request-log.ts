/**
 * The request log on PostgreSQL. A batch of any size is one prepared statement with one parameter:
 * the rows as a JSON array that json_populate_recordset turns into request_log rows by column name.
 */
import { jsonText, REQUEST_LOG_COLUMNS, requestColumns, requestFromRow, USAGE_AGGREGATES, usageFromRow } from '../rows.ts';
import type { RequestLogRecord, RequestLogStore } from '../store.ts';
import { rollupInserts, ROLLED_UP_COLUMNS } from '../usage-rollups.ts';
import type { PostgresDatabase, Statement } from './database.ts';

/**
 * The output travels inside the batch as a JSON string holding its JSON text, and is cast back to
 * json here. PostgreSQL's JSON functions (json_populate_recordset, ->, ->>) turn every \u escape
 * they read into its character and so refuse \u0000 (no PostgreSQL text holds NUL) and unpaired
 * surrogates, both of which a client can put in a prompt and a model can repeat; the json type
 * keeps the text it is given as it is, escapes included, so the stored output is exactly the JSON
 * the client received (docs/operations.md, "Stored outputs").
 */
const INSERTED = REQUEST_LOG_COLUMNS.map((column) => (column === 'output' ? `(output #>> '{}')::json` : column));

const ROLLUPS = rollupInserts('inserted');

// A record written twice (a retried batch) keeps its first version, and is added to the usage
// rollups once: they sum only the rows this statement inserted (returning only what they read, not
// the outputs), in the same commit.
const INSERT: Statement = {
  name: 'gateway_request_log_insert',
  text: `WITH inserted AS (
           INSERT INTO request_log (${REQUEST_LOG_COLUMNS.join(', ')})
           SELECT ${INSERTED.join(', ')} FROM json_populate_recordset(NULL::request_log, $1::json)
           ON CONFLICT (id) DO NOTHING
           RETURNING ${ROLLED_UP_COLUMNS.join(', ')}
         ), hourly AS (${ROLLUPS.hourly})
         ${ROLLUPS.daily}`,
};
const BY_ID: Statement = { name: 'gateway_request_log_get', text: 'SELECT * FROM request_log WHERE id = $1' };
const SUMMARY: Statement = {
  name: 'gateway_request_log_usage',
  text: `SELECT model, ${USAGE_AGGREGATES}
         FROM request_log
         WHERE owner_kind = $1 AND owner_id = $2 AND created_at >= $3
         GROUP BY model ORDER BY model COLLATE "C" NULLS LAST`,
};
/** Rows per DELETE: a busy day leaves hundreds of thousands, and one statement for all held its locks and a connection for long. */
const EXPIRY_BATCH_ROWS = 1_000;
const DELETE_EXPIRED: Statement = {
  name: 'gateway_request_log_delete_expired_batch',
  text: `DELETE FROM request_log WHERE id IN (SELECT id FROM request_log WHERE expires_at < $1 ORDER BY expires_at LIMIT ${EXPIRY_BATCH_ROWS})`,
};

/** One row as JSON; amounts as decimal strings, which json_populate_recordset reads into BIGINT exactly. */
function rowJson(record: RequestLogRecord): string {
  const columns = requestColumns(record);
  return JSON.stringify({
    ...columns,
    cost: columns.cost.toString(),
    over_hold: columns.over_hold.toString(),
    cache_savings: columns.cache_savings.toString(),
    output: jsonText(columns.output),
  });
}

export function postgresRequestLog(database: PostgresDatabase): RequestLogStore {
  return {
    async recordRequests(records) {
      if (records.length === 0) return;
      await database.query(INSERT, [`[${records.map(rowJson).join(',')}]`]);
    },
    async getRequest(id) {
      const row = (await database.query(BY_ID, [id])).rows[0];
      return row ? requestFromRow(row) : null;
    },
    async usageSummary(owner, since) {
      return (await database.query(SUMMARY, [owner.kind, owner.id, since])).rows.map(usageFromRow);
    },
    async deleteExpiredRequests(now) {
      let deleted = 0;
      for (;;) {
        const count = (await database.query(DELETE_EXPIRED, [now])).rowCount ?? 0;
        deleted += count;
        if (count < EXPIRY_BATCH_ROWS) return deleted;
      }
    },
  };
}
