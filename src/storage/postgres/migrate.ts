/**
 * Brings a PostgreSQL schema to the newest version at open, in one transaction under an advisory
 * lock keyed by the schema: when several instances start at once, one migrates and the others wait,
 * then find nothing to do. DDL is transactional in PostgreSQL, so a failed migration changes nothing.
 */
import type { Logger } from '../../core/logger.ts';
import { pendingMigrations } from '../migrations/migration.ts';
import { POSTGRES_MIGRATIONS } from '../migrations/postgres.ts';
import type { PostgresDatabase } from './database.ts';

export async function migratePostgres(database: PostgresDatabase, logger: Logger, now: number): Promise<void> {
  const pending = await database.transaction(async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`gateway.migrate.${database.schema ?? ''}`]);
    // Under the lock: concurrent CREATE SCHEMA IF NOT EXISTS can otherwise fail on a unique index.
    if (database.schema !== null) await client.query(`CREATE SCHEMA IF NOT EXISTS ${database.schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at BIGINT NOT NULL
)`);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const toApply = pendingMigrations(POSTGRES_MIGRATIONS, new Set(rows.map((row) => row.version)));
    for (const migration of toApply) {
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, now]);
    }
    return toApply;
  });
  for (const migration of pending) {
    logger.info({ version: migration.version, migration: migration.name }, 'applied storage migration');
  }
}
