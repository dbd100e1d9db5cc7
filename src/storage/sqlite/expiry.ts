/**
 * Deleting what has outlived its lifetime (request history, idempotency records, jobs: 24 hours),
 * a bounded batch at a time. node:sqlite runs on the event loop, and a busy server has hundreds of
 * thousands of rows to drop at each upkeep pass: one DELETE of them all stopped every request for
 * the whole of it (about 40 ms per 15,000 request log rows), every 30 seconds. Between batches,
 * waiting requests run; each batch is a unit of the group commit like any other write.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SqliteDatabase } from './database.ts';

/** Rows per DELETE: with its share of the group commit, 3–5 ms of work for request log rows. */
export const EXPIRY_BATCH_ROWS = 250;

/**
 * The upkeep step of a table with an indexed `expires_at` column: deletes its rows that expired
 * before `now`, oldest first, and resolves to how many there were.
 */
export function expiredRowsDeleter(database: SqliteDatabase, table: string): (now: number) => Promise<number> {
  // Batches are cut by expiry time, which every such table has an index on (some have no rowid).
  const batchEnd = database.prepare(`SELECT expires_at FROM ${table} WHERE expires_at < ? ORDER BY expires_at LIMIT 1 OFFSET ${EXPIRY_BATCH_ROWS - 1}`);
  const deleteBefore = database.prepare(`DELETE FROM ${table} WHERE expires_at < ?`);
  return async (now) => {
    let deleted = 0;
    for (;;) {
      const end = batchEnd.get(now) as { expires_at: number | bigint } | undefined;
      // Rows expiring in the same millisecond as the batch's last one go with it.
      const before = end === undefined ? now : Math.min(now, Number(end.expires_at) + 1);
      deleted += await database.grouped(() => Number(deleteBefore.run(before).changes));
      if (before === now) return deleted;
      await nextTurn();
    }
  };
}
