/**
 * Idempotency records on SQLite: the look-up and the claim run as one atomic unit, so two
 * requests with the same key cannot both claim it.
 */
import { idempotencyOutcome, type Row } from '../rows.ts';
import type { IdempotencyStore } from '../store.ts';
import type { SqliteDatabase } from './database.ts';
import { expiredRowsDeleter } from './expiry.ts';

export function sqliteIdempotency(database: SqliteDatabase): IdempotencyStore {
  const find = database.prepare('SELECT * FROM idempotency_records WHERE key_id = ? AND route = ? AND idempotency_key = ?');
  // Replaces a dead record (expired, or abandoned by a request that stopped holding its lock).
  const claim = database.prepare(
    `INSERT OR REPLACE INTO idempotency_records
       (key_id, route, idempotency_key, body_hash, state, locked_until, created_at, expires_at)
     VALUES (:key_id, :route, :idempotency_key, :body_hash, 'in_progress', :locked_until, :created_at, :expires_at)`,
  );
  const complete = database.prepare(
    `UPDATE idempotency_records
     SET state = 'completed', response_status = :status, response_headers = :headers, response_body = :body
     WHERE key_id = :key_id AND route = :route AND idempotency_key = :idempotency_key AND state = 'in_progress'`,
  );
  const abandon = database.prepare(
    `DELETE FROM idempotency_records
     WHERE key_id = ? AND route = ? AND idempotency_key = ? AND state = 'in_progress'`,
  );
  const deleteExpired = expiredRowsDeleter(database, 'idempotency_records');

  return {
    async beginIdempotent(input) {
      return database.grouped(() => {
        const existing = find.get(input.keyId, input.route, input.idempotencyKey) as Row | undefined;
        const claimable =
          !existing || Number(existing.expires_at) < input.now || (existing.state === 'in_progress' && Number(existing.locked_until) < input.now);
        if (!claimable) return idempotencyOutcome(existing, input.bodyHash);
        claim.run({
          key_id: input.keyId,
          route: input.route,
          idempotency_key: input.idempotencyKey,
          body_hash: input.bodyHash,
          locked_until: input.lockedUntil,
          created_at: input.now,
          expires_at: input.expiresAt,
        });
        return { state: 'started' } as const;
      });
    },
    async completeIdempotent(input) {
      await database.grouped(() =>
        complete.run({
          key_id: input.keyId,
          route: input.route,
          idempotency_key: input.idempotencyKey,
          status: input.status,
          headers: JSON.stringify(input.headers),
          body: input.body,
        }),
      );
    },
    async abandonIdempotent(input) {
      await database.grouped(() => abandon.run(input.keyId, input.route, input.idempotencyKey));
    },
    deleteExpiredIdempotency: deleteExpired,
  };
}
