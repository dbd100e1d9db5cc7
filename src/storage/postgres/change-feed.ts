/** The admin change counter on PostgreSQL: one row, bumped in place (the row lock orders bumps). */
import type { ChangeFeed } from '../store.ts';
import type { PostgresDatabase, Statement } from './database.ts';

const BUMP: Statement = {
  name: 'gateway_change_feed_bump',
  text: 'UPDATE change_feed SET version = version + 1 WHERE id = 1 RETURNING version',
};
const CURRENT: Statement = { name: 'gateway_change_feed_current', text: 'SELECT version FROM change_feed WHERE id = 1' };

export function postgresChangeFeed(database: PostgresDatabase): ChangeFeed {
  return {
    async bumpVersion() {
      return Number((await database.query(BUMP, [])).rows[0].version);
    },
    async currentVersion() {
      return Number((await database.query(CURRENT, [])).rows[0].version);
    },
  };
}
