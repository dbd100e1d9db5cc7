/**
 * The dashboard's reads on SQLite: a read-only connection of their own, in a worker thread
 * (dashboard-reader-worker.js), so that they never run on the server's event loop and in WAL mode
 * never wait for, or hold, the write lock; and a time limit per statement. node:sqlite cannot
 * interrupt a statement, so each dashboard statement calls `dashboard_within_limit()` in its WHERE
 * clause: a function evaluated per row read, which throws once the statement has run past its
 * limit and so ends it with an error. A read can also be formatted there (row-format.ts): the rows
 * are made into a page or an export on the worker, and only the text comes back. The worker starts
 * with the first read. An in-memory database (tests) has no file to open twice: its reads run on its
 * own connection, with the same limit.
 */
import { Worker } from 'node:worker_threads';
import { formatRows, type RowFormat } from '../row-format.ts';
import type { Row } from '../rows.ts';
import { type UsageQuery, UsageQueryTimeout, usageRowFrom, usageStatement, type UsageStore } from '../usage.ts';
import { MEMORY_DATABASE, type SqliteDatabase } from './database.ts';

export const WITHIN_LIMIT = 'dashboard_within_limit()';
const TIMED_OUT = 'dashboard statement time limit';

export interface SqliteDashboardReader {
  /** Runs a read under the time limit; the statement must hold WITHIN_LIMIT in its WHERE clause. */
  all(sql: string, values: readonly unknown[]): Promise<Row[]>;
  /** Runs a read the same way and makes its rows into text by `format` where they were read. */
  formatted(sql: string, values: readonly unknown[], format: RowFormat): Promise<string>;
  close(): Promise<void>;
}

type Answer =
  | { readonly id: number; readonly rows: Row[] }
  | { readonly id: number; readonly text: string }
  | { readonly id: number; readonly error: string; readonly timedOut: boolean };

export function openSqliteDashboardReader(database: SqliteDatabase, limitMs: number): SqliteDashboardReader {
  const timeout = () => new UsageQueryTimeout(`the query ran past its limit of ${limitMs} ms`);
  if (database.file === MEMORY_DATABASE) return inProcessReader(database, limitMs, timeout);
  let worker: Worker | null = null;
  let nextId = 0;
  const pending = new Map<number, { resolve: (result: Row[] | string) => void; reject: (error: Error) => void }>();

  function started(): Worker {
    if (worker) return worker;
    const thread = new Worker(new URL('./dashboard-reader-worker.js', import.meta.url), {
      workerData: { file: database.file, limitMs, timedOut: TIMED_OUT },
    });
    thread.unref();
    thread.on('message', (answer: Answer) => {
      const waiting = pending.get(answer.id);
      pending.delete(answer.id);
      if (pending.size === 0) thread.unref();
      if (!waiting) return;
      if ('rows' in answer) waiting.resolve(answer.rows);
      else if ('text' in answer) waiting.resolve(answer.text);
      else waiting.reject(answer.timedOut ? timeout() : new Error(answer.error));
    });
    // A worker that failed or exited takes its reads with it; the next read starts another.
    const gone = (error: Error) => {
      if (worker === thread) worker = null;
      for (const waiting of pending.values()) waiting.reject(error);
      pending.clear();
    };
    thread.on('error', gone);
    thread.on('exit', () => gone(new Error('the dashboard reader stopped')));
    worker = thread;
    return thread;
  }

  async function ask(sql: string, values: readonly unknown[], format?: RowFormat): Promise<Row[] | string> {
    // What the request path wrote before this read is on file when it runs: the group's own commit
    // (within a few milliseconds) is waited for rather than one forced on the event loop.
    await database.committed();
    const thread = started();
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      thread.ref();
      thread.postMessage({ id, sql, values, format });
    });
  }

  return {
    all: (sql, values) => ask(sql, values) as Promise<Row[]>,
    formatted: (sql, values, format) => ask(sql, values, format) as Promise<string>,
    async close() {
      const thread = worker;
      if (!thread) return;
      const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
      thread.postMessage('stop');
      await exited;
    },
  };
}

function inProcessReader(database: SqliteDatabase, limitMs: number, timeout: () => UsageQueryTimeout): SqliteDashboardReader {
  const connection = database.connection();
  let deadline = Number.POSITIVE_INFINITY;
  connection.function('dashboard_within_limit', { deterministic: false, directOnly: true }, () => {
    if (performance.now() > deadline) throw new Error(TIMED_OUT);
    return 1;
  });
  const reader: SqliteDashboardReader = {
    async all(sql, values) {
      const statement = connection.prepare(sql);
      statement.setReadBigInts(true);
      deadline = performance.now() + limitMs;
      try {
        return statement.all(...(values as never[])) as Row[];
      } catch (error) {
        throw error instanceof Error && error.message.includes(TIMED_OUT) ? timeout() : error;
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

export function sqliteUsage(reader: SqliteDashboardReader): UsageStore {
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
