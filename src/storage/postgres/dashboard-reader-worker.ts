/**
 * Worker thread of the dashboard's reads on PostgreSQL (dashboard-reader.ts): the dashboard's pool,
 * whose connections carry a statement_timeout, served as every dashboard reader thread is
 * (../dashboard-thread-serve.js). The rows are decoded here, off the server's event loop: a month's
 * export is tens of thousands of them.
 */
import { workerData } from 'node:worker_threads';
import { GatewayError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { serveDashboardReads, warn } from '../dashboard-thread-serve.js';
import { UsageQueryTimeout } from '../usage.ts';
import { openPostgresDatabase, type PostgresConnectionOptions } from './database.ts';
import { dashboardQuery } from './dashboard-reader.ts';

const forwarded = (details: object, message: string) => {
  const cause = (details as { err?: unknown }).err;
  warn(cause instanceof Error ? `${message}: ${cause.message}` : message);
};
const logger: Logger = { debug() {}, info() {}, warn: forwarded, error: forwarded };

const database = openPostgresDatabase({ ...(workerData as Omit<PostgresConnectionOptions, 'logger'>), logger });

serveDashboardReads(
  (sql, values) => dashboardQuery(database, sql, values),
  (error) =>
    error instanceof UsageQueryTimeout ? 'timed-out' : error instanceof GatewayError && error.code === 'storage_unavailable' ? 'unavailable' : 'failed',
  () => database.close(),
);
