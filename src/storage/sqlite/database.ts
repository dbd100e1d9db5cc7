/**
 * The SQLite connection: one DatabaseSync per store, tuned for the request hot path.
 *
 * - WAL with synchronous=NORMAL: a commit is a WAL append without an fsync. It survives a process
 *   crash; a power loss may lose the last commits.
 * - Group commit: the writes of the request path are committed together every GROUP_COMMIT_MS
 *   instead of one commit per request (a commit costs more than everything else the gateway does
 *   for a request; docs/performance.md). Two kinds of writes join a group:
 *   - `grouped` units (idempotency claims, request log rows) run at once in a transaction that
 *     stays open until the group commits, each atomic on its own (a savepoint) and visible at once
 *     to this connection (unless writes are held, below: then they wait);
 *   - deferred writers (`deferWrites`: the ledger, which decides in memory and writes behind,
 *     ledger.ts) run inside the group's transaction just before it commits, so the request path
 *     itself executes no statement at all.
 *   What a crash can lose is the last few milliseconds of writes, never half of one.
 * - Normal (not EXCLUSIVE) locking, so that a second process (the `gateway` command) can read and
 *   write the file while the server runs; busy_timeout makes it wait for the lock, which a group
 *   holds for a few milliseconds at a time. `changedElsewhere` tells the ledger when such a
 *   process committed, so that it re-reads the balances it holds in memory.
 * - Checkpoints: the server moves them to a worker thread (startBackgroundCheckpoints), so that the
 *   fsync of a checkpoint never blocks the event loop; other processes keep SQLite's automatic ones.
 *   SQLite rewinds the WAL only when a write transaction begins after a checkpoint that copied
 *   every frame, which commits every few milliseconds never allow: `holdWrites` keeps the file
 *   quiet (no group opens or commits) for the few milliseconds the worker needs to finish one,
 *   whenever the WAL has grown past 16 MB (checkpoints.ts).
 * - node:sqlite is synchronous, so a unit of work that runs without awaiting is atomic within the
 *   process; BEGIN IMMEDIATE takes the write lock up front, which keeps it atomic against other
 *   processes too and rules out a failed read-to-write lock upgrade halfway through.
 */
import { commitBeforeCrash } from '../../core/crash-point.ts';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';

export const MEMORY_DATABASE = ':memory:';

/** How long a statement waits for another process's write lock before failing. */
const BUSY_TIMEOUT_MS = 5_000;
/** How long a group of writes stays open before it is committed. */
export const GROUP_COMMIT_MS = 5;
/** The WAL file is cut back to this size when it is rewound after a burst of writes. */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

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
   * connection once the promise resolves, committed within GROUP_COMMIT_MS. Rolled back alone when
   * it throws. It waits while writes are held (holdWrites).
   */
  grouped<T>(work: () => T): Promise<T>;
  /**
   * Registers a writer that the next group commit runs inside its transaction, before COMMIT (and
   * that `transaction` runs first, so that its work sees every earlier write). Registering the same
   * writer again before it ran does nothing.
   */
  deferWrites(writer: DeferredWriter): void;
  /** Commits the open group, and runs the deferred writers, now (before reads of their tables, at close). */
  flush(): void;
  /**
   * Resolves once what is open or pending now is committed by the group's own commit (at once when
   * nothing is): for a reader on another connection that must see these writes, without committing
   * a group early (an extra commit on the event loop) for it. A group rolled back resolves it too.
   */
  committed(): Promise<void>;
  /**
   * Commits the open group and opens no other until releaseWrites: grouped units wait and
   * deferred writers keep their writes in memory. For the checkpoint that lets the WAL rewind.
   */
  holdWrites(): void;
  /** Ends holdWrites: waiting units run, and pending writes are committed in the next group. */
  releaseWrites(): void;
  /** True when another connection (another process) committed changes since the last call. */
  changedElsewhere(): boolean;
  /**
   * The one instance of `create()` for this connection: state that every store sharing the
   * connection (the handles of one process on one file) must share, such as the ledger's.
   */
  shared<T>(name: string, create: () => T): T;
  /** Runs a script of statements (migrations). */
  exec(sql: string): void;
  /**
   * The connection itself, for the dashboard's reads of an in-memory database, which has no file
   * another connection could open (dashboard-reader.ts).
   */
  connection(): DatabaseSync;
  close(): void;
}

/** Writes kept in memory until the next group commit (see deferWrites). */
export interface DeferredWriter {
  /** Executes the pending writes; runs inside the group's transaction. */
  write(): void;
  /** The group that `write` ran in was rolled back: what it wrote is not in the database. */
  lost(): void;
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
    // A test's crash point (core/crash-point.ts) dies after what was decided is on disk, as with a slower crash.
    const database = connection.database;
    commitBeforeCrash(() => database.flush());
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
  db.exec(`PRAGMA journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  // Each unit of a group commit is a savepoint, and a statement in a transaction may journal too.
  // By default SQLite moves such a journal that grows past 64 KiB to a temporary file, and the
  // connection then writes every later unit's and statement's pages there before the WAL: under
  // load, about three writes for each of the WAL's own. In memory it is freed with its unit.
  db.exec('PRAGMA temp_store = MEMORY');
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  const savepoint = db.prepare('SAVEPOINT unit');
  const releaseSavepoint = db.prepare('RELEASE unit');
  const rollbackSavepoint = db.prepare('ROLLBACK TO unit');
  const dataVersion = db.prepare('PRAGMA data_version');
  let lastDataVersion = readDataVersion();
  /** Set while a group's transaction is open (a `grouped` unit began it). */
  let groupOpen = false;
  let groupTimer: NodeJS.Timeout | undefined;
  const writers = new Set<DeferredWriter>();
  /** Set between holdWrites and releaseWrites; resolved by releaseWrites. */
  let held: { readonly released: Promise<void>; readonly release: () => void } | undefined;
  /** The writers that ran in the open group, told when it is rolled back. */
  const wroteInGroup = new Set<DeferredWriter>();
  /** Who waits for the open group's end (committed). */
  let groupEnded: (() => void)[] = [];
  const sharedState = new Map<string, unknown>();

  function readDataVersion(): number {
    return Number((dataVersion.get() as { data_version: number | bigint }).data_version);
  }

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

  function scheduleCommit(): void {
    groupTimer ??= setTimeout(commitGroupFromTimer, GROUP_COMMIT_MS);
  }

  function openGroup(): void {
    if (groupOpen) return;
    begin.run();
    groupOpen = true;
  }

  /** Runs the deferred writers in the open group; each runs once per registration. */
  function runWriters(): void {
    for (const writer of writers) {
      writers.delete(writer);
      wroteInGroup.add(writer);
      writer.write();
    }
  }

  /** Rolls the open group back and tells the writers that wrote in it. */
  function abandonGroup(): void {
    clearTimeout(groupTimer);
    groupTimer = undefined;
    groupOpen = false;
    if (db.isTransaction) rollback.run();
    const lost = [...wroteInGroup];
    wroteInGroup.clear();
    endGroup();
    for (const writer of lost) writer.lost();
  }

  /** Tells who waits for the open group (committed) that it has ended. */
  function endGroup(): void {
    const waiting = groupEnded;
    groupEnded = [];
    for (const resolve of waiting) resolve();
  }

  function commitGroup(): void {
    clearTimeout(groupTimer);
    groupTimer = undefined;
    if (!groupOpen && writers.size === 0) return;
    try {
      openGroup();
      runWriters();
      commit.run();
    } catch (error) {
      abandonGroup();
      throw error;
    }
    groupOpen = false;
    wroteInGroup.clear();
    endGroup();
  }

  /** A commit nobody awaits (the timer's, a hold's): a failure is reported, its writes are lost. */
  function commitGroupReporting(): void {
    try {
      commitGroup();
    } catch (error) {
      options.onGroupCommitError?.(error);
    }
  }

  function commitGroupFromTimer(): void {
    groupTimer = undefined;
    // A hold commits nothing; releaseWrites schedules the commit of what waited.
    if (!held) commitGroupReporting();
  }

  return {
    file,
    prepare(sql, statementOptions = {}) {
      const statement = db.prepare(sql);
      if (statementOptions.bigints) statement.setReadBigInts(true);
      return statement;
    },
    async grouped(work) {
      while (held) await held.released;
      openGroup();
      scheduleCommit();
      return inUnit(work);
    },
    deferWrites(writer) {
      writers.add(writer);
      scheduleCommit();
    },
    transaction(work) {
      if (groupOpen || writers.size > 0) {
        try {
          openGroup();
          runWriters();
        } catch (error) {
          abandonGroup();
          throw error;
        }
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
    committed() {
      if (!groupOpen && writers.size === 0) return Promise.resolve();
      return new Promise((resolve) => groupEnded.push(resolve));
    },
    holdWrites() {
      if (held) return;
      commitGroupReporting();
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      held = { released, release };
    },
    releaseWrites() {
      const current = held;
      if (!current) return;
      held = undefined;
      current.release();
      if (writers.size > 0) scheduleCommit();
    },
    changedElsewhere() {
      const version = readDataVersion();
      if (version === lastDataVersion) return false;
      lastDataVersion = version;
      return true;
    },
    shared<T>(name: string, create: () => T): T {
      if (!sharedState.has(name)) sharedState.set(name, create());
      return sharedState.get(name) as T;
    },
    exec(sql) {
      db.exec(sql);
    },
    connection() {
      return db;
    },
    close() {
      commitGroup();
      db.close();
    },
  };
}
