/**
 * Background jobs on PostgreSQL. A claim locks the oldest claimable row with FOR UPDATE SKIP LOCKED,
 * so concurrent claimers on any instance each take a different job without waiting on each other.
 */
import { jobFromRow, jsonText } from '../rows.ts';
import type { JobStore } from '../store.ts';
import type { PostgresDatabase, Statement } from './database.ts';

const INSERT: Statement = {
  name: 'gateway_jobs_insert',
  text: `INSERT INTO jobs (id, kind, owner_kind, owner_id, key_id, status, payload, result, reservation_id, created_at, updated_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11)
         RETURNING *`,
};
const BY_ID: Statement = { name: 'gateway_jobs_get', text: 'SELECT * FROM jobs WHERE id = $1' };
// Claimable: queued, or in progress with a lapsed (or no) lease, and not past its lifetime.
const CLAIM: Statement = {
  name: 'gateway_jobs_claim',
  text: `UPDATE jobs
         SET status = 'in_progress', lease_owner = $2, lease_until = $4, attempts = attempts + 1, updated_at = $3
         WHERE id = (
           SELECT id FROM jobs
           WHERE kind = $1 AND status IN ('queued', 'in_progress') AND expires_at >= $3
             AND (status = 'queued' OR lease_until IS NULL OR lease_until < $3)
           ORDER BY created_at, id
           LIMIT 1
           FOR UPDATE SKIP LOCKED
         )
         RETURNING *`,
};
const TRANSITION: Statement = {
  name: 'gateway_jobs_transition',
  text: `UPDATE jobs SET
           status = COALESCE($3, status),
           result = CASE WHEN $4::boolean THEN $5::jsonb ELSE result END,
           payload = CASE WHEN $6::boolean THEN $7::jsonb ELSE payload END,
           lease_until = CASE WHEN $8::boolean THEN $9::bigint ELSE lease_until END,
           lease_owner = CASE WHEN $8::boolean AND $9::bigint IS NULL THEN NULL ELSE lease_owner END,
           updated_at = $10
         WHERE id = $1 AND status = ANY ($2::text[])
         RETURNING *`,
};
const DELETE_EXPIRED: Statement = { name: 'gateway_jobs_delete_expired', text: 'DELETE FROM jobs WHERE expires_at < $1' };

export function postgresJobs(database: PostgresDatabase): JobStore {
  return {
    async createJob(job) {
      const values = [
        job.id,
        job.kind,
        job.owner.kind,
        job.owner.id,
        job.keyId,
        job.status,
        jsonText(job.payload),
        jsonText(job.result),
        job.reservationId,
        job.createdAt,
        job.expiresAt,
      ];
      return jobFromRow((await database.query(INSERT, values)).rows[0]);
    },
    async getJob(id) {
      const row = (await database.query(BY_ID, [id])).rows[0];
      return row ? jobFromRow(row) : null;
    },
    async claimJob(kind, worker, now, leaseUntil) {
      const row = (await database.query(CLAIM, [kind, worker, now, leaseUntil])).rows[0];
      return row ? jobFromRow(row) : null;
    },
    async transitionJob(id, from, patch) {
      if (from.length === 0) return null;
      const values = [
        id,
        from,
        patch.status ?? null,
        patch.result !== undefined,
        jsonText(patch.result),
        patch.payload !== undefined,
        jsonText(patch.payload),
        patch.leaseUntil !== undefined,
        patch.leaseUntil ?? null,
        patch.now,
      ];
      const row = (await database.query(TRANSITION, values)).rows[0];
      return row ? jobFromRow(row) : null;
    },
    async deleteExpiredJobs(now) {
      return (await database.query(DELETE_EXPIRED, [now])).rowCount ?? 0;
    },
  };
}
