/**
 * Background jobs on SQLite. A claim is a single UPDATE of the oldest claimable row; SQLite runs
 * one writer at a time, so two claimers can never take the same job.
 */
import { jobFromRow, jsonText, type Row } from '../rows.ts';
import type { JobStore } from '../store.ts';
import type { SqliteDatabase } from './database.ts';
import { expiredRowsDeleter } from './expiry.ts';

export function sqliteJobs(database: SqliteDatabase): JobStore {
  const insert = database.prepare(
    `INSERT INTO jobs (id, kind, owner_kind, owner_id, key_id, status, payload, result, reservation_id, created_at, updated_at, expires_at)
     VALUES (:id, :kind, :owner_kind, :owner_id, :key_id, :status, :payload, :result, :reservation_id, :created_at, :created_at, :expires_at)
     RETURNING *`,
  );
  const byId = database.prepare('SELECT * FROM jobs WHERE id = ?');
  // Claimable: queued, or in progress with a lapsed (or no) lease, and not past its lifetime.
  const claim = database.prepare(
    `UPDATE jobs
     SET status = 'in_progress', lease_owner = :worker, lease_until = :lease_until, attempts = attempts + 1, updated_at = :now
     WHERE id = (
       SELECT id FROM jobs
       WHERE kind = :kind AND status IN ('queued', 'in_progress') AND expires_at >= :now
         AND (status = 'queued' OR lease_until IS NULL OR lease_until < :now)
       ORDER BY created_at, id
       LIMIT 1
     )
     RETURNING *`,
  );
  const transition = database.prepare(
    `UPDATE jobs SET
       status = COALESCE(:status, status),
       result = CASE WHEN :set_result THEN :result ELSE result END,
       payload = CASE WHEN :set_payload THEN :payload ELSE payload END,
       lease_until = CASE WHEN :set_lease THEN :lease_until ELSE lease_until END,
       lease_owner = CASE WHEN :set_lease AND :lease_until IS NULL THEN NULL ELSE lease_owner END,
       updated_at = :now
     WHERE id = :id AND status IN (SELECT value FROM json_each(:from_statuses))
     RETURNING *`,
  );
  const deleteExpired = expiredRowsDeleter(database, 'jobs');

  return {
    async createJob(job) {
      const row = insert.get({
        id: job.id,
        kind: job.kind,
        owner_kind: job.owner.kind,
        owner_id: job.owner.id,
        key_id: job.keyId,
        status: job.status,
        payload: jsonText(job.payload),
        result: jsonText(job.result),
        reservation_id: job.reservationId,
        created_at: job.createdAt,
        expires_at: job.expiresAt,
      }) as Row;
      return jobFromRow(row);
    },
    async getJob(id) {
      const row = byId.get(id) as Row | undefined;
      return row ? jobFromRow(row) : null;
    },
    async claimJob(kind, worker, now, leaseUntil) {
      const row = claim.get({ kind, worker, now, lease_until: leaseUntil }) as Row | undefined;
      return row ? jobFromRow(row) : null;
    },
    async transitionJob(id, from, patch) {
      if (from.length === 0) return null;
      const row = transition.get({
        id,
        from_statuses: JSON.stringify(from),
        status: patch.status ?? null,
        set_result: patch.result === undefined ? 0 : 1,
        result: jsonText(patch.result),
        set_payload: patch.payload === undefined ? 0 : 1,
        payload: jsonText(patch.payload),
        set_lease: patch.leaseUntil === undefined ? 0 : 1,
        lease_until: patch.leaseUntil ?? null,
        now: patch.now,
      }) as Row | undefined;
      return row ? jobFromRow(row) : null;
    },
    deleteExpiredJobs: deleteExpired,
  };
}
