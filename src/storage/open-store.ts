/**
 * Opens the configured store: PostgreSQL when a `postgres://` (or `postgresql://`) URL is given,
 * else the embedded SQLite file `<dataDir>/gateway.sqlite`. Either is migrated to the newest schema
 * before it is returned.
 */
import { join } from 'node:path';
import { silentLogger, type Logger } from '../core/logger.ts';
import type { HeartbeatOptions } from './postgres/instances.ts';
import type { Store } from './store.ts';

export const SQLITE_FILE_NAME = 'gateway.sqlite';

export interface OpenStoreOptions {
  /** `postgres://…` selects PostgreSQL; undefined selects SQLite. */
  readonly databaseUrl?: string;
  /** The folder of the SQLite file (created when missing). */
  readonly dataDir: string;
  /** SQLite only: another file, or ':memory:' for a private throwaway database. */
  readonly sqliteFile?: string;
  /** SQLite only: checkpoint the WAL from a worker thread (the server process). */
  readonly backgroundCheckpoints?: boolean;
  /**
   * SQLite only: this process is the file's one server; opening fails while another holds it
   * (the ledger is decided in the server's memory; see sqlite/ledger.ts).
   */
  readonly exclusiveServer?: boolean;
  /**
   * PostgreSQL only: this store serves requests; it keeps a heartbeat and releases the holds of
   * instances whose heartbeat lapsed (postgres/instances.ts). The `gateway` command leaves it out.
   */
  readonly heartbeat?: HeartbeatOptions;
  /**
   * PostgreSQL only: busy wallets' holds are decided against slices of credit the instance holds
   * (postgres/wallet-leases.ts). By default when it keeps a heartbeat.
   */
  readonly leases?: boolean;
  /** PostgreSQL only: a schema of its own, created when missing (lowercase letters, digits, `_`). */
  readonly schema?: string;
  /** PostgreSQL only: connections in the pool (default 10). */
  readonly poolSize?: number;
  readonly logger?: Logger;
  /** The clock for creation times; replaceable in tests. */
  readonly now?: () => number;
}

const POSTGRES_URL = /^postgres(?:ql)?:\/\//;
const DEFAULT_POOL_SIZE = 10;

/**
 * Each engine's code (and its driver) is loaded only when it is used: an embedded gateway never
 * carries the PostgreSQL client in memory, nor a PostgreSQL one the SQLite store.
 */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  if (options.databaseUrl === undefined) {
    const { openSqliteStore } = await import('./sqlite/store.ts');
    return openSqliteStore({
      file: options.sqliteFile ?? join(options.dataDir, SQLITE_FILE_NAME),
      logger,
      now,
      backgroundCheckpoints: options.backgroundCheckpoints ?? false,
      exclusiveServer: options.exclusiveServer ?? false,
    });
  }
  if (!POSTGRES_URL.test(options.databaseUrl)) {
    throw new RangeError('the database URL must start with postgres:// or postgresql://');
  }
  const { openPostgresStore } = await import('./postgres/store.ts');
  return openPostgresStore({
    connectionString: options.databaseUrl,
    schema: options.schema ?? null,
    poolSize: options.poolSize ?? DEFAULT_POOL_SIZE,
    logger,
    now,
    heartbeat: options.heartbeat,
    leases: options.leases,
  });
}
