/**
 * The dashboard's reads on SQLite: a read-only connection of its own (database.ts, openReader),
 * and a time limit per statement. node:sqlite cannot interrupt a statement, so each dashboard
 * statement calls `dashboard_within_limit()` in its WHERE clause: a function evaluated per row read,
 * which throws once the statement has run past its limit and so ends it with an error.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { Row } from '../rows.ts';
import { UsageQueryTimeout, usageRowFrom, usageStatement, type UsageStore } from '../usage.ts';
import { MEMORY_DATABASE, type SqliteDatabase } from './database.ts';

export const WITHIN_LIMIT = 'dashboard_within_limit()';
const TIMED_OUT = 'dashboard statement time limit';

export interface SqliteDashboardReader {
  /** Runs a read under the time limit; the statement must hold WITHIN_LIMIT in its WHERE clause. */
  all(sql: string, values: readonly unknown[]): Row[];
  close(): void;
}

export function openSqliteDashboardReader(database: SqliteDatabase, limitMs: number): SqliteDashboardReader {
  const reader: DatabaseSync = database.openReader();
  const own = database.file !== MEMORY_DATABASE;
  let deadline = Number.POSITIVE_INFINITY;
  reader.function('dashboard_within_limit', { deterministic: false, directOnly: true }, () => {
    if (performance.now() > deadline) throw new Error(TIMED_OUT);
    return 1;
  });
  return {
    all(sql, values) {
      // What the request path wrote in the open group becomes visible to this connection.
      database.flush();
      const statement = reader.prepare(sql);
      statement.setReadBigInts(true);
      deadline = performance.now() + limitMs;
      try {
        return statement.all(...(values as never[])) as Row[];
      } catch (error) {
        if (error instanceof Error && error.message.includes(TIMED_OUT)) throw new UsageQueryTimeout(`the query ran past its limit of ${limitMs} ms`);
        throw error;
      } finally {
        deadline = Number.POSITIVE_INFINITY;
      }
    },
    close() {
      if (own) reader.close();
    },
  };
}

export function sqliteUsage(reader: SqliteDashboardReader): UsageStore {
  return {
    async usage(query) {
      const { text, values } = usageStatement(query, () => '?', WITHIN_LIMIT);
      return reader.all(text, values).map(usageRowFrom);
    },
  };
}
