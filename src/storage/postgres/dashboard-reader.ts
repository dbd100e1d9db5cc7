/**
 * The dashboard's reads on PostgreSQL: a pool of their own whose connections carry a
 * statement_timeout, so that a slow dashboard query never takes a connection from the request
 * path, held by a worker thread (../dashboard-thread.ts, dashboard-reader-worker.ts), so that
 * decoding its rows and rendering a page from them never run on the server's event loop.
 */
import { errors } from '../../core/errors.ts';
import { type DashboardReader, openDashboardThread } from '../dashboard-thread.ts';
import type { Row } from '../rows.ts';
import { UsageQueryTimeout } from '../usage.ts';
import { isConnectionFailure, type PostgresConnectionOptions, type PostgresDatabase } from './database.ts';

/** SQLSTATE query_canceled: what statement_timeout ends a statement with. */
const QUERY_CANCELED = '57014';

/** A statement on the dashboard's pool, its time limit reported as such (the pages say so). */
export async function dashboardQuery(database: PostgresDatabase, text: string, values: readonly unknown[]): Promise<Row[]> {
  try {
    return (await database.pool.query<Row>(text, values as unknown[])).rows;
  } catch (error) {
    if ((error as { code?: unknown }).code === QUERY_CANCELED) throw new UsageQueryTimeout('the query ran past its time limit');
    if (isConnectionFailure(error)) throw errors.storageUnavailable(error);
    throw error;
  }
}

export function openPostgresDashboardReader(options: PostgresConnectionOptions & { readonly statementTimeoutMs: number }): DashboardReader {
  // Only what the connections need crosses to the thread.
  const connection: Omit<PostgresConnectionOptions, 'logger'> = {
    connectionString: options.connectionString,
    schema: options.schema,
    poolSize: options.poolSize,
    statementTimeoutMs: options.statementTimeoutMs,
    applicationName: options.applicationName,
  };
  return openDashboardThread({
    script: new URL('./dashboard-reader-worker.ts', import.meta.url),
    workerData: connection,
    limitMs: options.statementTimeoutMs,
    logger: options.logger,
  });
}
