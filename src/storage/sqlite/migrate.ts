/**
 * Brings a SQLite database to the newest schema at open: one BEGIN IMMEDIATE transaction, so two
 * processes opening the same file at once apply each migration exactly once (the second waits for
 * the first, then finds nothing to do), and a failed migration leaves the file as it was.
 */
import type { Logger } from '../../core/logger.ts';
import { pendingMigrations } from '../migrations/migration.ts';
import { SQLITE_MIGRATIONS } from '../migrations/sqlite.ts';
import type { SqliteDatabase } from './database.ts';

export function migrateSqlite(database: SqliteDatabase, logger: Logger, now: number): void {
  const applied = database.transaction(() => {
    database.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at INTEGER NOT NULL
) STRICT`);
    const versions = database
      .prepare('SELECT version FROM schema_migrations')
      .all()
      .map((row) => Number(row.version));
    const pending = pendingMigrations(SQLITE_MIGRATIONS, new Set(versions));
    const record = database.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const migration of pending) {
      database.exec(migration.sql);
      record.run(migration.version, migration.name, now);
    }
    return pending;
  });
  for (const migration of applied) {
    logger.info({ version: migration.version, migration: migration.name }, 'applied storage migration');
  }
}
