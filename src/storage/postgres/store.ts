/**
 * The scale-out store: PostgreSQL through a connection pool, migrated at open. Any number of gateway
 * instances may share one database.
 */
import { timeOrderedId } from '../../core/ids.ts';
import type { Logger } from '../../core/logger.ts';
import type { Store } from '../store.ts';
import { postgresBlobs } from './blobs.ts';
import { postgresChangeFeed } from './change-feed.ts';
import { openPostgresDatabase } from './database.ts';
import { postgresDirectory } from './directory.ts';
import { postgresIdempotency } from './idempotency.ts';
import { postgresInstances, startHeartbeat, type Heartbeat, type HeartbeatOptions, type VitalsSource } from './instances.ts';
import { postgresJobs } from './jobs.ts';
import { postgresLedger } from './ledger.ts';
import { postgresPeople } from './people.ts';
import { postgresDashboardLists } from './dashboard-lists.ts';
import { openPostgresDashboardReader } from './dashboard-reader.ts';
import { postgresDashboardViews } from './dashboard-views.ts';
import { postgresUsage } from './usage.ts';
import { DASHBOARD_STATEMENT_LIMIT_MS } from '../usage.ts';
import { migratePostgres } from './migrate.ts';
import { postgresRequestLog } from './request-log.ts';
import { postgresServedModels } from './served-models.ts';
import { postgresWebhooks } from './webhooks.ts';

/** Connections of the dashboard's pool: a few pages at once; more wait rather than load the database. */
const DASHBOARD_POOL_SIZE = 2;

export interface PostgresStoreOptions {
  readonly connectionString: string;
  /** A schema of its own (created when missing); null uses the server's default search_path. */
  readonly schema: string | null;
  readonly poolSize: number;
  readonly logger: Logger;
  readonly now: () => number;
  /** This store serves requests: it keeps a heartbeat and releases lapsed instances' holds (instances.ts). */
  readonly heartbeat?: HeartbeatOptions;
  /**
   * Busy wallets' holds are decided against slices of credit this instance holds (wallet-leases.ts);
   * by default when the store serves requests (has a heartbeat, which returns a dead instance's slices).
   */
  readonly leases?: boolean;
}

/** How long a stopping instance waits for its slices' last holds to close before it stops anyway. */
const SLICES_RETURN_MS = 5_000;

export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const database = openPostgresDatabase(options);
  // The heartbeat has a connection of its own, kept open: its session is the instance's (instances.ts).
  const beating = options.heartbeat ? openPostgresDatabase({ ...options, poolSize: 1, keepIdle: true }) : null;
  // The dashboard's queries have a pool of their own, with a time limit, on a thread of their own
  // (docs/dashboard.md, "What the dashboard costs the gateway"); it starts with the first read.
  const dashboard = openPostgresDashboardReader({
    ...options,
    poolSize: DASHBOARD_POOL_SIZE,
    statementTimeoutMs: DASHBOARD_STATEMENT_LIMIT_MS,
    applicationName: 'gateway-dashboard',
  });
  const instanceId = timeOrderedId('ins');
  const vitals: VitalsSource = { read: null };
  let heartbeat: Heartbeat | null;
  try {
    await migratePostgres(database, options.logger, options.now());
    heartbeat =
      beating && options.heartbeat ? await startHeartbeat(database, beating, instanceId, options.heartbeat, options.now, options.logger, vitals) : null;
  } catch (error) {
    await beating?.close();
    await dashboard.close();
    await database.close();
    throw error;
  }
  const { stopLeases, ...ledger } = postgresLedger(database, options.now, instanceId, options.leases ?? options.heartbeat !== undefined);
  return {
    engine: 'postgres',
    instanceId,
    databaseBlobs: postgresBlobs(database, options.now),
    ...postgresDirectory(database, options.now),
    ...ledger,
    ...postgresRequestLog(database),
    ...postgresIdempotency(database),
    ...postgresJobs(database),
    ...postgresWebhooks(database, options.now),
    ...postgresChangeFeed(database),
    ...postgresServedModels(database),
    ...postgresPeople(database, options.now),
    ...postgresDashboardLists(database),
    ...postgresDashboardViews(dashboard),
    ...postgresInstances(database, vitals),
    ...postgresUsage(dashboard),
    async close() {
      // Slices go back before the heartbeat stops: what is left of them would otherwise wait for a
      // peer's next beat.
      await stopLeases(SLICES_RETURN_MS);
      await heartbeat?.stop();
      await beating?.close();
      await dashboard.close();
      await database.close();
    },
  };
}
