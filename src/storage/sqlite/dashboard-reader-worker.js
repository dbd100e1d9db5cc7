/**
 * Worker thread of the dashboard's reads on SQLite (dashboard-reader.ts): a read-only connection of
 * its own on the database file, served as every dashboard reader thread is
 * (../dashboard-thread-serve.js). Each statement calls `dashboard_within_limit()` in its WHERE
 * clause, which throws once the statement has run past its time limit: node:sqlite cannot
 * interrupt a statement, but it stops at the next row it reads.
 *
 * Plain JavaScript, as checkpoint-worker.js: a TypeScript entry point would load the type stripper
 * into this isolate at its start; the formats, in TypeScript, load it with the first formatted read.
 */
import { DatabaseSync } from 'node:sqlite';
import { workerData } from 'node:worker_threads';
import { serveDashboardReads } from '../dashboard-thread-serve.js';

/** @type {{ file: string, limitMs: number, timedOut: string }} */
const { file, limitMs, timedOut } = workerData;
const db = new DatabaseSync(file, { readOnly: true, timeout: 5_000 });
let deadline = Number.POSITIVE_INFINITY;
db.function('dashboard_within_limit', { deterministic: false, directOnly: true }, () => {
  if (performance.now() > deadline) throw new Error(timedOut);
  return 1;
});

/** Statements by their text: the dashboard sends a few shapes again and again. */
const statements = new Map();
const MAX_STATEMENTS = 200;

function prepared(sql) {
  let statement = statements.get(sql);
  if (statement) return statement;
  if (statements.size >= MAX_STATEMENTS) statements.clear();
  statement = db.prepare(sql);
  statement.setReadBigInts(true);
  statements.set(sql, statement);
  return statement;
}

serveDashboardReads(
  (sql, values) => {
    deadline = performance.now() + limitMs;
    try {
      return prepared(sql).all(...values);
    } finally {
      deadline = Number.POSITIVE_INFINITY;
    }
  },
  (error) => (error instanceof Error && error.message.includes(timedOut) ? 'timed-out' : 'failed'),
  () => db.close(),
);
