/**
 * Background WAL checkpoints for the server's database. SQLite checkpoints automatically inside a
 * commit once the WAL passes 1,000 pages, and the fsync of that checkpoint blocks the process for
 * milliseconds to tens of milliseconds on a real disk: the p99 of every request that waits behind
 * it. The server turns that off and checkpoints from a worker thread instead; if the worker fails,
 * automatic checkpoints come back so that the WAL can never grow without bound.
 */
import { Worker } from 'node:worker_threads';
import type { StorageLogger } from '../logger.ts';
import type { SqliteDatabase } from './database.ts';

const CHECKPOINT_INTERVAL_MS = 1_000;
const AUTOMATIC_CHECKPOINT_PAGES = 1_000;

export interface BackgroundCheckpoints {
  /** Runs a last checkpoint and stops the worker. */
  stop(): Promise<void>;
}

export function startBackgroundCheckpoints(database: SqliteDatabase, logger: StorageLogger): BackgroundCheckpoints {
  database.exec('PRAGMA wal_autocheckpoint = 0');
  const worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), {
    workerData: { file: database.file, intervalMs: CHECKPOINT_INTERVAL_MS },
  });
  worker.unref();
  let stopping = false;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('error', (error) => logger.error({ err: error }, 'background checkpoint worker failed'));
  // Whenever the worker is gone (stopped, or failed), commits checkpoint again: another handle may
  // still share this connection (database.ts).
  void exited.then(() => {
    if (!stopping) logger.error({}, 'background checkpoints stopped; SQLite checkpoints automatically again');
    database.exec(`PRAGMA wal_autocheckpoint = ${AUTOMATIC_CHECKPOINT_PAGES}`);
  });
  return {
    async stop() {
      stopping = true;
      // Unreferenced so that it never keeps a process alive; waiting for its exit must.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
