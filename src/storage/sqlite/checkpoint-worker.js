/**
 * Worker thread of background checkpoints (checkpoints.ts): its own connection to the database
 * file copies WAL frames into the database on a timer, so that the fsync this takes happens off
 * the event loop of the server. PASSIVE never waits for, or blocks, the server's writes.
 *
 * Plain JavaScript on purpose: a worker is an isolate of its own, and a TypeScript entry point
 * would make it load the type stripper a second time, about 16 MB of resident memory for a dozen
 * lines.
 */
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

/** @type {{ file: string, intervalMs: number }} */
const { file, intervalMs } = workerData;
const db = new DatabaseSync(file, { timeout: 1_000 });
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
// A checkpoint that cannot run now (the file is locked by a migration, say) runs on the next tick.
function checkpointNow() {
  try {
    checkpoint.get();
  } catch {
    // retried on the next tick
  }
}
const timer = setInterval(checkpointNow, intervalMs);

parentPort?.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  checkpointNow();
  db.close();
  parentPort?.close();
});
