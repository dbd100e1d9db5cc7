/**
 * Usage analytics on PostgreSQL, read through the dashboard's own pool (store.ts) whose connections
 * carry a statement_timeout: a slow dashboard query never takes a connection from the request path.
 */
import { errors } from '../../core/errors.ts';
import { formatRows } from '../row-format.ts';
import type { Row } from '../rows.ts';
import { type UsageQuery, UsageQueryTimeout, usageRowFrom, usageStatement, type UsageStore } from '../usage.ts';
import { isConnectionFailure, type PostgresDatabase } from './database.ts';

/** SQLSTATE query_canceled: what statement_timeout ends a statement with. */
const QUERY_CANCELED = '57014';

export async function dashboardQuery(database: PostgresDatabase, text: string, values: readonly unknown[]): Promise<Row[]> {
  try {
    return (await database.pool.query<Row>(text, values as unknown[])).rows;
  } catch (error) {
    if ((error as { code?: unknown }).code === QUERY_CANCELED) throw new UsageQueryTimeout('the query ran past its time limit');
    if (isConnectionFailure(error)) throw errors.storageUnavailable(error);
    throw error;
  }
}

export function postgresUsage(database: PostgresDatabase): UsageStore {
  const rowsOf = (query: UsageQuery) => {
    const { text, values } = usageStatement(query, (index) => `$${index}`);
    return dashboardQuery(database, text, values);
  };
  return {
    async usage(query) {
      return (await rowsOf(query)).map(usageRowFrom);
    },
    async usageText(query, format) {
      return formatRows(format, await rowsOf(query));
    },
  };
}
