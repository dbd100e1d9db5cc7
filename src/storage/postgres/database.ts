/**
 * The PostgreSQL connection pool.
 *
 * - An optional schema isolates one gateway (or one test run) in a shared database; it is set as
 *   the search_path in each connection's startup packet, so every pooled connection uses it with no
 *   extra round trip.
 * - Value parsing is fixed per pool, not through pg's process-wide defaults: BIGINT, NUMERIC, JSON
 *   and JSONB arrive as text and the shared decoders (rows.ts) turn them into exact bigints, numbers
 *   and parsed JSON, exactly as for SQLite.
 * - Hot statements are named, so each connection prepares them once and then only binds values.
 * - Lost connections become `storage_unavailable` errors (503, retryable); other failures stay as
 *   they are.
 */
import pg from 'pg';
import { errors } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { Row } from '../rows.ts';
import { databaseRoundTrips } from '../round-trips.ts';

const TEXT_TYPES = new Set([
  20, // int8
  1700, // numeric (SUM of BIGINT)
  114, // json
  3802, // jsonb
]);

const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    TEXT_TYPES.has(oid) ? (value: string) => value : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * pg's client with every statement counted (round-trips.ts): the pools make their connections from
 * it, so whatever sends a statement — the store's queries, a transaction's client, BEGIN and
 * COMMIT — is counted, at the cost of one increment.
 */
class CountingClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: forwards every overload of pg's query unchanged.
  override query(...args: unknown[]): any {
    databaseRoundTrips.count += 1;
    return (super.query as (...forwarded: unknown[]) => unknown)(...args);
  }
}

/** A statement prepared once per connection under its name. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

export interface PostgresDatabase {
  readonly pool: pg.Pool;
  /** The schema the store lives in; null means the server's default search_path. */
  readonly schema: string | null;
  query(statement: Statement, values: readonly unknown[]): Promise<pg.QueryResult<Row>>;
  /** Runs `work` in a transaction on one connection: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface PostgresConnectionOptions {
  readonly connectionString: string;
  readonly schema: string | null;
  readonly poolSize: number;
  readonly logger: Logger;
  /** Ends any statement running longer (statement_timeout); none when undefined. */
  readonly statementTimeoutMs?: number;
  /** The application_name the server shows for these connections (default `gateway`). */
  readonly applicationName?: string;
  /** Keeps idle connections open instead of closing them after 10 s (the heartbeat's session). */
  readonly keepIdle?: boolean;
}

/** Schema names are interpolated into SQL and the startup options, so only plain identifiers pass. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function openPostgresDatabase(options: PostgresConnectionOptions): PostgresDatabase {
  if (options.schema !== null && !SCHEMA_NAME.test(options.schema)) {
    throw new RangeError(`schema name ${JSON.stringify(options.schema)} must match ${SCHEMA_NAME}`);
  }
  const pool = new pg.Pool({
    Client: CountingClient,
    connectionString: options.connectionString,
    max: options.poolSize,
    connectionTimeoutMillis: 10_000,
    ...(options.keepIdle === true ? { idleTimeoutMillis: 0 } : {}),
    application_name: options.applicationName ?? 'gateway',
    ...(options.statementTimeoutMs === undefined ? {} : { statement_timeout: options.statementTimeoutMs }),
    types,
    ...(options.schema === null ? {} : { options: `-c search_path=${options.schema}` }),
  });
  // An idle connection dropped by the server must not crash the process; the pool replaces it.
  pool.on('error', (error) => options.logger.warn({ err: error }, 'idle PostgreSQL connection failed'));

  return {
    pool,
    schema: options.schema,
    async query(statement, values) {
      try {
        return await pool.query<Row>({ name: statement.name, text: statement.text, values: values as unknown[] });
      } catch (error) {
        throw isConnectionFailure(error) ? errors.storageUnavailable(error) : error;
      }
    },
    async transaction(work) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw isConnectionFailure(error) ? errors.storageUnavailable(error) : error;
      }
      try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw isConnectionFailure(error) ? errors.storageUnavailable(error) : error;
      } finally {
        client.release();
      }
    },
    async close() {
      await pool.end();
    },
  };
}

/**
 * Connection-level failures: SQLSTATE classes 08 (connection exception), 57P (server shutting
 * down) and 53300 (too many connections), socket errors, and the pool's own connect timeout and
 * terminated-connection errors, which carry no code.
 */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, syscall } = error as Error & { code?: unknown; syscall?: unknown };
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    return code.startsWith('08') || code.startsWith('57P') || code === '53300';
  }
  if (typeof syscall === 'string') return true;
  return /^Connection terminated|timeout exceeded when trying to connect/.test(error.message);
}
