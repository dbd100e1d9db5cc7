/**
 * The SQLite connection: one DatabaseSync per store, tuned for the request hot path.
 *
 * - WAL with synchronous=NORMAL: a commit is a WAL append without an fsync. It survives a process
 *   crash; a power loss may lose the last commits.
 * - Group commit: the writes of the request path (reservations, settlements, request log rows,
 *   idempotency claims) run in a transaction that stays open for GROUP_COMMIT_MS and is committed
 *   once for everything written meanwhile. Each unit of work is atomic on its own (a savepoint) and
 *   visible at once to this connection, which is the only writer in this process: a reservation
 *   is checked against everything written before it. What a crash can lose is the last few
 *   milliseconds of writes — never half of one. A commit per request costs more than everything
 *   else the gateway does for it (docs/performance.md).
 * - Normal (not EXCLUSIVE) locking, so that a second process (the `gateway` command) can read and
 *   write the file while the server runs; busy_timeout makes it wait for the lock, which a group
 *   holds for a few milliseconds at a time.
 * - Checkpoints: the server moves them to a worker thread (startBackgroundCheckpoints), so that the
 *   fsync of a checkpoint never blocks the event loop; other processes keep SQLite's automatic ones.
 * - node:sqlite is synchronous, so a unit of work that runs without awaiting is atomic within the
 *   process; BEGIN IMMEDIATE takes the write lock up front, which keeps it atomic against other
 *   processes too and rules out a failed read-to-write lock upgrade halfway through.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';

export const MEMORY_DATABASE = ':memory:';

/** How long a statement waits for another process's write lock before failing. */
const BUSY_TIMEOUT_MS = 5_000;
/** How long a group of writes stays open before it is committed. */
export const GROUP_COMMIT_MS = 5;

export interface SqliteDatabase {
  /** The file, or MEMORY_DATABASE. */
  readonly file: string;
  /**
   * Prepares a statement once. `bigints` makes every integer column come back as a bigint: needed
   * for money and rate columns, which may exceed 2^53.
   */
  prepare(sql: string, options?: { bigints?: boolean }): StatementSync;
  /**
   * Runs `work` atomically and commits it (with any open group) before returning; rolled back
   * when it throws. For changes other processes must see at once (admin changes, credit grants).
   */
  transaction<T>(work: () => T): T;
  /**
   * Runs `work` atomically in the open group (opening one when there is none): visible to this
   * connection at once, committed within GROUP_COMMIT_MS. Rolled back alone when it throws.
   */
  grouped<T>(work: () => T): T;
  /** Commits the open group now (before reads by another connection, at close). */
  flush(): void;
  /** Runs a script of statements (migrations). */
  exec(sql: string): void;
  close(): void;
}

export interface SqliteDatabaseOptions {
  /** Called when a group commit made by the timer fails: its writes are lost. */
  readonly onGroupCommitError?: (error: unknown) => void;
}

/**
 * Every store a process opens on one file shares one connection (and so one open group): a second
 * connection in the same process would wait synchronously for the first one's group lock, which
 * only this event loop could commit, and would not see the group's writes.
 */
const sharedConnections = new Map<string, { database: SqliteDatabase; handles: number }>();

export function openSqliteDatabase(file: string, options: SqliteDatabaseOptions = {}): SqliteDatabase {
  if (file === MEMORY_DATABASE) return connect(file, options);
  const key = resolve(file);
  let connection = sharedConnections.get(key);
  if (connection) connection.handles += 1;
  else {
    connection = { database: connect(file, options), handles: 1 };
    sharedConnections.set(key, connection);
  }
  const shared = connection;
  let closed = false;
  return {
    ...shared.database,
    close() {
      if (closed) return;
      closed = true;
      shared.handles -= 1;
      if (shared.handles > 0) {
        shared.database.flush();
        return;
      }
      sharedConnections.delete(key);
      shared.database.close();
    },
  };
}

function connect(file: string, options: SqliteDatabaseOptions): SqliteDatabase {
  if (file !== MEMORY_DATABASE) mkdirSync(dirname(file), { recursive: true });
  const db = new DatabaseSync(file, { timeout: BUSY_TIMEOUT_MS, enableForeignKeyConstraints: true });
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  const savepoint = db.prepare('SAVEPOINT unit');
  const releaseSavepoint = db.prepare('RELEASE unit');
  const rollbackSavepoint = db.prepare('ROLLBACK TO unit');
  let groupTimer: NodeJS.Timeout | undefined;

  function inUnit<T>(work: () => T): T {
    savepoint.run();
    try {
      const result = work();
      releaseSavepoint.run();
      return result;
    } catch (error) {
      rollbackSavepoint.run();
      releaseSavepoint.run();
      throw error;
    }
  }

  function commitGroup(): void {
    if (groupTimer === undefined) return;
    clearTimeout(groupTimer);
    groupTimer = undefined;
    try {
      commit.run();
    } catch (error) {
      if (db.isTransaction) rollback.run();
      throw error;
    }
  }

  function commitGroupFromTimer(): void {
    try {
      commitGroup();
    } catch (error) {
      options.onGroupCommitError?.(error);
    }
  }

  return {
    file,
    prepare(sql, statementOptions = {}) {
      const statement = db.prepare(sql);
      if (statementOptions.bigints) statement.setReadBigInts(true);
      return statement;
    },
    grouped(work) {
      if (groupTimer === undefined) {
        begin.run();
        groupTimer = setTimeout(commitGroupFromTimer, GROUP_COMMIT_MS);
      }
      return inUnit(work);
    },
    transaction(work) {
      if (groupTimer !== undefined) {
        const result = inUnit(work);
        commitGroup();
        return result;
      }
      begin.run();
      try {
        const result = work();
        commit.run();
        return result;
      } catch (error) {
        if (db.isTransaction) rollback.run();
        throw error;
      }
    },
    flush: commitGroup,
    exec(sql) {
      db.exec(sql);
    },
    close() {
      commitGroup();
      db.close();
    },
  };
}
