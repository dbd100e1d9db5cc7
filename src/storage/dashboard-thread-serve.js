/**
 * The worker's side of a dashboard reader thread (dashboard-thread.ts): lowers the thread's CPU
 * priority, then answers each read it is sent with its rows, or with the text a row format made of
 * them (row-format.ts), or with why it failed. Plain JavaScript, so that a worker in plain
 * JavaScript (sqlite/dashboard-reader-worker.js) loads no type stripper before its first formatted
 * read.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';

// The reads yield the CPU to the server's event loop: this thread alone runs at the lowest priority,
// so that an operator's heavy reads take what the request path leaves rather than an equal share of
// a busy core. On Linux a thread has a priority of its own, set through its id; elsewhere the
// thread keeps the server's priority.
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), 19);
} catch {
  // Not Linux: nothing to lower this way.
}

/** Tells the server's log of something that went wrong beside the reads (a dropped idle connection). */
export function warn(message) {
  parentPort?.postMessage({ warning: message });
}

/**
 * @param {(sql: string, values: unknown[]) => unknown[] | Promise<unknown[]>} read the rows of a statement
 * @param {(error: unknown) => 'timed-out' | 'unavailable' | 'failed'} failureOf why a read failed
 * @param {() => void | Promise<void>} close ends the connection, at 'stop'
 */
export function serveDashboardReads(read, failureOf, close) {
  parentPort?.on('message', async (message) => {
    if (message === 'stop') {
      await close();
      parentPort?.close();
      return;
    }
    const { id, sql, values, format } = message;
    try {
      const rows = await read(sql, values);
      if (!format) parentPort?.postMessage({ id, rows });
      else parentPort?.postMessage({ id, text: await (await import('./row-format.ts')).formatRows(format, rows) });
    } catch (error) {
      parentPort?.postMessage({ id, error: error instanceof Error ? error.message : String(error), failure: failureOf(error) });
    }
  });
}
