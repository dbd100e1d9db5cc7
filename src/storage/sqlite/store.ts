/**
 * The embedded store: one SQLite file (or an in-memory database for tests), migrated at open.
 */
import type { Logger } from '../../core/logger.ts';
import type { LedgerStore, Store } from '../store.ts';
import { sqliteChangeFeed } from './change-feed.ts';
import { startBackgroundCheckpoints, type BackgroundCheckpointOptions } from './checkpoints.ts';
import { MEMORY_DATABASE, openSqliteDatabase } from './database.ts';
import { sqliteDirectory } from './directory.ts';
import { sqliteIdempotency } from './idempotency.ts';
import { sqliteJobs } from './jobs.ts';
import { sqliteLedger } from './ledger.ts';
import { sqlitePeople } from './people.ts';
import { sqliteDashboardLists } from './dashboard-lists.ts';
import { openSqliteDashboardReader, sqliteUsage } from './dashboard-reader.ts';
import { DASHBOARD_STATEMENT_LIMIT_MS } from '../usage.ts';
import { migrateSqlite } from './migrate.ts';
import { sqliteRequestLog } from './request-log.ts';
import { sqliteServedModels } from './served-models.ts';
import { lockServerFile } from './server-lock.ts';
import { sqliteWebhooks } from './webhooks.ts';

export interface SqliteStoreOptions {
  /** A file path, or ':memory:' for a private throwaway database. */
  readonly file: string;
  readonly logger: Logger;
  readonly now: () => number;
  /** Checkpoint from a worker thread instead of inside commits (the server; see checkpoints.ts). */
  readonly backgroundCheckpoints?: boolean;
  /** Tunes the background checkpoints (tests shorten and lower them); see checkpoints.ts. */
  readonly checkpoints?: BackgroundCheckpointOptions;
  /** Hold the file's server lock: this process is its one server (server-lock.ts). */
  readonly exclusiveServer?: boolean;
}

export async function openSqliteStore(options: SqliteStoreOptions): Promise<Store> {
  const serverLock = options.exclusiveServer && options.file !== MEMORY_DATABASE ? lockServerFile(options.file) : null;
  const database = openSqliteDatabase(options.file, {
    onGroupCommitError: (error) => options.logger.error({ err: error }, 'SQLite group commit failed; its writes are lost'),
  });
  let ledger: LedgerStore & { readonly instanceId: string };
  try {
    migrateSqlite(database, options.logger, options.now());
    const { releaseHeldElsewhere, ...held } = sqliteLedger(database, options.now);
    if (serverLock) {
      // The lock proves that the server before this one is gone: its holds go back to the wallets
      // now rather than when they expire.
      const released = releaseHeldElsewhere(options.now());
      if (released > 0) options.logger.info({ count: released }, 'released the credit holds of the previous server');
      // Its jobs' leases too: this server's workers take them over now (docs/jobs.md).
      const leases = await sqliteJobs(database).releaseLeasesHeldElsewhere(held.instanceId, options.now());
      if (leases > 0) options.logger.info({ count: leases }, 'released the job leases of the previous server');
    }
    ledger = held;
  } catch (error) {
    database.close();
    serverLock?.release();
    throw error;
  }
  const dashboardReader = openSqliteDashboardReader(database, DASHBOARD_STATEMENT_LIMIT_MS);
  const checkpoints =
    options.backgroundCheckpoints && options.file !== MEMORY_DATABASE ? startBackgroundCheckpoints(database, options.logger, options.checkpoints) : null;
  return {
    engine: 'sqlite',
    databaseBlobs: null,
    ...sqliteDirectory(database, options.now),
    ...ledger,
    ...sqliteRequestLog(database),
    ...sqliteIdempotency(database),
    ...sqliteJobs(database),
    ...sqliteWebhooks(database, options.now),
    ...sqliteChangeFeed(database),
    ...sqliteServedModels(database),
    ...sqlitePeople(database, options.now),
    ...sqliteDashboardLists(database),
    ...sqliteUsage(dashboardReader),
    async close() {
      database.flush();
      await dashboardReader.close();
      await checkpoints?.stop();
      database.close();
      serverLock?.release();
    },
  };
}
