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
 * The number of frames in the WAL, or 0 when the checkpoint could not run now (the file is locked
 * by a migration, say): it runs again on the next tick.
 * @returns {number}
 */
function checkpointNow() {
  try {
    const result = /** @type {{ log: number }} */ (checkpoint.get());
    return Number(result.log);
  } catch {
    return 0;
  }
}

const timer = setInterval(() => {
  if (checkpointNow() >= rewindFrames) parentPort?.postMessage('hold');
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
