/**
 * Background WAL checkpoints for the server's database. SQLite checkpoints automatically inside a
 * commit once the WAL passes 1,000 pages, and the fsync of that checkpoint blocks the process for
 * milliseconds to tens of milliseconds on a real disk: the p99 of every request that waits behind
 * it. The server turns that off and checkpoints from a worker thread instead; if the worker fails,
 * automatic checkpoints come back so that the WAL can never grow without bound.
 *
 * The worker also asks the server to hold its writes for the short checkpoint that lets the WAL
 * rewind (checkpoint-worker.js): without it, a server under steady load never gives SQLite the
 * moment it needs, and the WAL file grows by every frame ever written (hundreds of MB an hour).
 * It is rewound once it holds REWIND_FRAMES frames and the last checkpoint left no more than a few
 * behind (a reader, such as the dashboard's, that still reads an older state keeps frames from being
 * copied, and writes held then would wait for a checkpoint that cannot rewind): so it stays under
 * about that much plus what one interval writes, and under four times that while readers last.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../core/logger.ts';
import type { SqliteDatabase } from './database.ts';

const CHECKPOINT_INTERVAL_MS = 1_000;
const AUTOMATIC_CHECKPOINT_PAGES = 1_000;
/** The WAL is rewound once it holds this many frames: 16 MB with 4 KB pages. */
const REWIND_FRAMES = 4_096;
/** Writes resume after this long even if the worker never answers (a stuck disk, a dead worker). */
const MAX_HOLD_MS = 100;

export interface BackgroundCheckpoints {
  /** Runs a last checkpoint and stops the worker. */
  stop(): Promise<void>;
}

export interface BackgroundCheckpointOptions {
  /** Between two checkpoints (tests shorten it). */
  readonly intervalMs?: number;
  /** The WAL's size in frames from which it is rewound (tests lower it). */
  readonly rewindFrames?: number;
  /** Told each time the server's writes are held for a rewind (tests count them). */
  readonly onHold?: () => void;
}

export function startBackgroundCheckpoints(database: SqliteDatabase, logger: Logger, options: BackgroundCheckpointOptions = {}): BackgroundCheckpoints {
  database.exec('PRAGMA wal_autocheckpoint = 0');
  const worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), {
    workerData: {
      file: database.file,
      intervalMs: options.intervalMs ?? CHECKPOINT_INTERVAL_MS,
      rewindFrames: Math.max(1, options.rewindFrames ?? REWIND_FRAMES),
    },
  });
  worker.unref();
  let holdLimit: NodeJS.Timeout | undefined;
  const release = () => {
    clearTimeout(holdLimit);
    holdLimit = undefined;
    database.releaseWrites();
  };
  worker.on('message', (message: unknown) => {
    if (message === 'hold') {
      options.onHold?.();
      database.holdWrites();
      // A worker that asks again before the release (a slow event loop) restarts the limit.
      clearTimeout(holdLimit);
      holdLimit = setTimeout(release, MAX_HOLD_MS);
      worker.postMessage('held');
    } else if (message === 'checkpointed') release();
  });
  let stopping = false;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('error', (error) => logger.error({ err: error }, 'background checkpoint worker failed'));
  // Whenever the worker is gone (stopped, or failed), commits checkpoint again: another handle may
  // still share this connection (database.ts).
  void exited.then(() => {
    release();
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
