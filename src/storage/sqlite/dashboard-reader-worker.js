/**
 * Worker thread of the dashboard's reads on SQLite (dashboard-reader.ts): a read-only connection of
 * its own on the database file runs each statement it is sent and posts the rows back, or the text
 * a row format made of them (row-format.ts), so that a long read, and a page rendered from it, cost
 * the server's event loop nothing, at the lowest CPU priority. Each statement calls `dashboard_within_limit()`
 * in its WHERE clause, which throws once the statement has run past its time limit: node:sqlite
 * cannot interrupt a statement, but it stops at the next row it reads.
 *
 * Plain JavaScript, as checkpoint-worker.js: a TypeScript entry point would load the type stripper
 * into this isolate at its start; the formats, in TypeScript, load it with the first formatted read.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

// The reads yield the CPU to the server's event loop: this thread alone runs at the lowest priority,
// so that an operator's heavy reads take what the request path leaves rather than an equal share of
// a busy core. On Linux a thread has a priority of its own, set through its id; elsewhere the
// thread keeps the server's priority.
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), 19);
} catch {
  // Not Linux: nothing to lower this way.
}

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

function rowsOf(sql, values) {
  deadline = performance.now() + limitMs;
  try {
    return prepared(sql).all(...values);
  } finally {
    deadline = Number.POSITIVE_INFINITY;
  }
}

parentPort?.on('message', async (message) => {
  if (message === 'stop') {
    db.close();
    parentPort?.close();
    return;
  }
  const { id, sql, values, format } = message;
  try {
    const rows = rowsOf(sql, values);
    if (!format) parentPort?.postMessage({ id, rows });
    else parentPort?.postMessage({ id, text: await (await import('../row-format.ts')).formatRows(format, rows) });
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    parentPort?.postMessage({ id, error: text, timedOut: text.includes(timedOut) });
  }
});
