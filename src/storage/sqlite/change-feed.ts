/** The admin change counter on SQLite: one row, bumped in place. */
import type { ChangeFeed } from '../store.ts';
import type { SqliteDatabase } from './database.ts';

export function sqliteChangeFeed(database: SqliteDatabase): ChangeFeed {
  const bump = database.prepare('UPDATE change_feed SET version = version + 1 WHERE id = 1 RETURNING version');
  const current = database.prepare('SELECT version FROM change_feed WHERE id = 1');
  return {
    async bumpVersion() {
      return Number((bump.get() as { version: number }).version);
    },
    async currentVersion() {
      return Number((current.get() as { version: number }).version);
    },
  };
}
