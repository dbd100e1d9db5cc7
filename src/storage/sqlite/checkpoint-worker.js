/**
 * Worker thread of background checkpoints (checkpoints.ts): its own connection to the database
 * file copies WAL frames into the database on a timer, so that the fsync this takes happens off
 * the event loop of the server. PASSIVE never waits for, or blocks, the server's writes.
 *
 * The server commits every few milliseconds, so frames arrive while a checkpoint copies, and SQLite
 * rewinds the WAL only when a write begins after a checkpoint that left no frame behind. So once
 * the WAL holds `rewindFrames` frames, the worker asks the server to hold its writes (`hold`),
 * copies the few frames that came meanwhile once the server says it holds them (`held`), and lets
 * it go on (`checkpointed`): the server's next write starts the WAL again from its beginning. Not
 * after every checkpoint: that first write after a rewind syncs the WAL header, on the event loop.
 *
 * Plain JavaScript on purpose: a worker is an isolate of its own, and a TypeScript entry point
 * would make it load the type stripper a second time, about 16 MB of resident memory for a dozen
 * lines.
 */
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

/** @type {{ file: string, intervalMs: number, rewindFrames: number }} */
const { file, intervalMs, rewindFrames } = workerData;
const db = new DatabaseSync(file, { timeout: 1_000 });
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

/**
 * The frames in the WAL and those of them copied into the database, or none when the checkpoint
 * could not run now (the file is locked by a migration, say): it runs again on the next tick.
 * @returns {{ log: number, copied: number }}
 */
function checkpointNow() {
  try {
    const result = /** @type {{ log: number, checkpointed: number }} */ (checkpoint.get());
    return { log: Number(result.log), copied: Number(result.checkpointed) };
  } catch {
    return { log: 0, copied: 0 };
  }
}

/**
 * Frames a checkpoint may have left behind for the server's writes to be held for: those that came
 * while it copied. More means a reader (the dashboard's) still reads an older state of the file,
 * and the held checkpoint could not rewind the WAL anyway: the server's writes are held only when it
 * can, or once the WAL has grown to four times the rewind size, whatever it costs.
 */
const FRAMES_LEFT_FOR_A_HOLD = 64;

const timer = setInterval(() => {
  const { log, copied } = checkpointNow();
  if (log >= rewindFrames && (log - copied <= FRAMES_LEFT_FOR_A_HOLD || log >= 4 * rewindFrames)) parentPort?.postMessage('hold');
}, intervalMs);

parentPort?.on('message', (message) => {
  if (message === 'held') {
    checkpointNow();
    parentPort?.postMessage('checkpointed');
    return;
  }
  if (message !== 'stop') return;
  clearInterval(timer);
  checkpointNow();
  db.close();
  parentPort?.close();
});
