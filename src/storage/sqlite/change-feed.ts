/**
 * The admin change counter on SQLite: one row, bumped in place. A bump follows every admin change
 * and commits at once, with the open group (database.ts), so other processes see the change.
 */
import type { ChangeFeed } from '../store.ts';
import type { SqliteDatabase } from './database.ts';

export function sqliteChangeFeed(database: SqliteDatabase): ChangeFeed {
  const bump = database.prepare('UPDATE change_feed SET version = version + 1 WHERE id = 1 RETURNING version');
  const current = database.prepare('SELECT version FROM change_feed WHERE id = 1');
  return {
    async bumpVersion() {
      return Number(database.transaction(() => bump.get() as { version: number }).version);
    },
    async currentVersion() {
      return Number((current.get() as { version: number }).version);
    },
  };
}
