/**
 * The dashboard's reads on SQLite: a read-only connection of their own, in a worker thread
 * (../dashboard-thread.ts, dashboard-reader-worker.js), so that they never run on the server's
 * event loop and in WAL mode never wait for, or hold, the write lock; and a time limit per
 * statement. node:sqlite cannot interrupt a statement, so each dashboard statement calls
 * `dashboard_within_limit()` (WITHIN_LIMIT) in its WHERE clause: a function evaluated per row read,
 * which throws once the statement has run past its limit and so ends it with an error. An
 * in-memory database (tests) has no file to open twice: its reads run on its own connection, with
 * the same limit.
 */
import { type DashboardReader, openDashboardThread } from '../dashboard-thread.ts';
import { formatRows } from '../row-format.ts';
import type { Row } from '../rows.ts';
import { type UsageQuery, UsageQueryTimeout, usageRowFrom, usageStatement, type UsageStore } from '../usage.ts';
import { MEMORY_DATABASE, type SqliteDatabase } from './database.ts';

export const WITHIN_LIMIT = 'dashboard_within_limit()';
const TIMED_OUT = 'dashboard statement time limit';

export function openSqliteDashboardReader(database: SqliteDatabase, limitMs: number): DashboardReader {
  if (database.file === MEMORY_DATABASE) return inProcessReader(database, limitMs);
  return openDashboardThread({
    script: new URL('./dashboard-reader-worker.js', import.meta.url),
    workerData: { file: database.file, limitMs, timedOut: TIMED_OUT },
    limitMs,
    // What the request path wrote before this read is on file when it runs: the group's own commit
    // (within a few milliseconds) is waited for rather than one forced on the event loop.
    beforeRead: () => database.committed(),
  });
}

function inProcessReader(database: SqliteDatabase, limitMs: number): DashboardReader {
  const connection = database.connection();
  let deadline = Number.POSITIVE_INFINITY;
  connection.function('dashboard_within_limit', { deterministic: false, directOnly: true }, () => {
    if (performance.now() > deadline) throw new Error(TIMED_OUT);
    return 1;
  });
  const reader: DashboardReader = {
    async all(sql, values) {
      const statement = connection.prepare(sql);
      statement.setReadBigInts(true);
      deadline = performance.now() + limitMs;
      try {
        return statement.all(...(values as never[])) as Row[];
      } catch (error) {
        throw error instanceof Error && error.message.includes(TIMED_OUT) ? new UsageQueryTimeout(`the query ran past its limit of ${limitMs} ms`) : error;
      } finally {
        deadline = Number.POSITIVE_INFINITY;
      }
    },
    async formatted(sql, values, format) {
      return formatRows(format, await reader.all(sql, values));
    },
    async close() {},
  };
  return reader;
}

export function sqliteUsage(reader: DashboardReader): UsageStore {
  const statement = (query: UsageQuery) => usageStatement(query, () => '?', WITHIN_LIMIT);
  return {
    async usage(query) {
      const { text, values } = statement(query);
      return (await reader.all(text, values)).map(usageRowFrom);
    },
    usageText(query, format) {
      const { text, values } = statement(query);
      return reader.formatted(text, values, format);
    },
  };
}
