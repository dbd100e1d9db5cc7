/**
 * Idempotency records on PostgreSQL. The claim is one INSERT ... ON CONFLICT: of two requests racing
 * for the same key, the unique index lets exactly one insert (or take over a dead record); the other
 * then reads what the winner holds.
 */
import { idempotencyOutcome } from '../rows.ts';
import type { IdempotencyBegin, IdempotencyStore } from '../store.ts';
import type { PostgresDatabase, Statement } from './database.ts';

// Takes over a dead record: expired, or abandoned by a request that stopped holding its lock.
const CLAIM: Statement = {
  name: 'gateway_idempotency_claim',
  text: `INSERT INTO idempotency_records AS r
           (key_id, route, idempotency_key, body_hash, state, locked_until, created_at, expires_at)
         VALUES ($1, $2, $3, $4, 'in_progress', $5, $6, $7)
         ON CONFLICT (key_id, route, idempotency_key) DO UPDATE SET
           body_hash = excluded.body_hash, state = 'in_progress', locked_until = excluded.locked_until,
           created_at = excluded.created_at, expires_at = excluded.expires_at,
           response_status = NULL, response_headers = NULL, response_body = NULL
         WHERE r.expires_at < excluded.created_at
            OR (r.state = 'in_progress' AND r.locked_until < excluded.created_at)
         RETURNING 1`,
};
const FIND: Statement = {
  name: 'gateway_idempotency_find',
  text: 'SELECT * FROM idempotency_records WHERE key_id = $1 AND route = $2 AND idempotency_key = $3',
};
const COMPLETE: Statement = {
  name: 'gateway_idempotency_complete',
  text: `UPDATE idempotency_records
         SET state = 'completed', response_status = $4, response_headers = $5, response_body = $6
         WHERE key_id = $1 AND route = $2 AND idempotency_key = $3 AND state = 'in_progress'`,
};
const ABANDON: Statement = {
  name: 'gateway_idempotency_abandon',
  text: `DELETE FROM idempotency_records
         WHERE key_id = $1 AND route = $2 AND idempotency_key = $3 AND state = 'in_progress'`,
};
const DELETE_EXPIRED: Statement = {
  name: 'gateway_idempotency_delete_expired',
  text: 'DELETE FROM idempotency_records WHERE expires_at < $1',
};

/** A record can vanish between the failed claim and the read (abandoned); then the claim is retried. */
const CLAIM_ATTEMPTS = 3;

export function postgresIdempotency(database: PostgresDatabase): IdempotencyStore {
  return {
    async beginIdempotent(input) {
      const key = [input.keyId, input.route, input.idempotencyKey];
      for (let attempt = 1; ; attempt++) {
        const claim = [...key, input.bodyHash, input.lockedUntil, input.now, input.expiresAt];
        if ((await database.query(CLAIM, claim)).rows.length > 0) return { state: 'started' } satisfies IdempotencyBegin;
        const existing = (await database.query(FIND, key)).rows[0];
        if (existing) return idempotencyOutcome(existing, input.bodyHash);
        if (attempt === CLAIM_ATTEMPTS) return { state: 'in_progress' } satisfies IdempotencyBegin;
      }
    },
    async completeIdempotent(input) {
      const values = [input.keyId, input.route, input.idempotencyKey, input.status, JSON.stringify(input.headers), input.body];
      await database.query(COMPLETE, values);
    },
    async abandonIdempotent(input) {
      await database.query(ABANDON, [input.keyId, input.route, input.idempotencyKey]);
    },
    async deleteExpiredIdempotency(now) {
      return (await database.query(DELETE_EXPIRED, [now])).rowCount ?? 0;
    },
  };
}
