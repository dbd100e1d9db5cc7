/**
 * One gateway server per SQLite file. The embedded store's ledger decides in the server's memory
 * and writes behind (ledger.ts), which is only sound while no other server spends from the same
 * wallets; several instances share PostgreSQL instead. The lock is SQLite's own: an exclusive lock
 * on a small file beside the database, held by the connection for the life of the process and
 * released by the operating system however the process ends. Other processes (the `gateway`
 * command) do not take it and use the database as before.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

/** Another server holds the file: a refusal to start, which the server prints as one line. */
export class ServerLockedError extends Error {
  override readonly name = 'ServerLockedError';
}

export interface ServerLock {
  release(): void;
}

export function lockServerFile(databaseFile: string): ServerLock {
  const lockFile = `${databaseFile}.server-lock`;
  mkdirSync(dirname(lockFile), { recursive: true });
  const lock = new DatabaseSync(lockFile, { timeout: 0 });
  try {
    lock.exec('PRAGMA locking_mode = EXCLUSIVE');
    // In exclusive locking mode the first write transaction's lock is kept after it ends.
    lock.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS server_lock (pid INTEGER); COMMIT');
  } catch (error) {
    lock.close();
    if ((error as { errcode?: number }).errcode === 5 /* SQLITE_BUSY */) {
      throw new ServerLockedError(
        `another gateway server is already running on ${databaseFile}: the embedded store serves one server process per file (run several instances on PostgreSQL)`,
      );
    }
    throw error;
  }
  return { release: () => lock.close() };
}
