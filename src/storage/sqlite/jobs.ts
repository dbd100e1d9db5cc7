/**
 * Background jobs on SQLite. A claim is a single UPDATE of the first claimable row in the claim
 * order (store.ts, claimJob); SQLite runs one writer at a time, so two claimers can never take the
 * same job. A job is created in a
 * transaction of its own, committed before the promise resolves (with the group's pending writes,
 * among them the job's credit hold): a queued job survives a crash right after its answer.
 */
import { ENDED_JOB_STATUSES, type JobStore } from '../store.ts';
import { jobFromRow, jsonText, WAITING_COUNTS, waitingJobs, type Row } from '../rows.ts';
import type { SqliteDatabase } from './database.ts';
import { expiredRowsDeleter } from './expiry.ts';

const ENDED = ENDED_JOB_STATUSES.map((status) => `'${status}'`).join(', ');
/** Jobs of the kind under a live lease, by owner (a parked job holds none). */
const RUNNING_BY_OWNER = `SELECT owner_kind, owner_id, COUNT(*) AS n FROM jobs
  WHERE kind = :kind AND lease_owner IS NOT NULL AND status = 'in_progress' AND lease_until >= :now
  GROUP BY owner_kind, owner_id`;
const CLAIMABLE = `j.kind = :kind AND j.expires_at >= :now AND (
    j.status = 'queued'
    OR (j.status = 'in_progress' AND j.next_attempt_at IS NULL AND (j.lease_until IS NULL OR j.lease_until < :now))
    OR (j.status = 'in_progress' AND j.next_attempt_at <= :now))`;
/** Fewest running first, then the owner served longest ago (or never), then the oldest job. */
const CLAIM_ORDER = 'COALESCE(r.n, 0), COALESCE(t.claimed_at, 0), j.created_at, j.id';

export function sqliteJobs(database: SqliteDatabase): JobStore {
  // Every job statement reads bigints: the cost column may exceed 2^53.
  const prepare = (sql: string) => database.prepare(sql, { bigints: true });
  const insert = prepare(
    `INSERT INTO jobs (id, kind, owner_kind, owner_id, key_id, status, payload, result, reservation_id, created_at, updated_at, expires_at)
     VALUES (:id, :kind, :owner_kind, :owner_id, :key_id, :status, :payload, :result, :reservation_id, :created_at, :created_at, :expires_at)
     RETURNING *`,
  );
  const byId = prepare('SELECT * FROM jobs WHERE id = ?');
  // Claimable: queued, parked and due, or in progress with a lapsed (or no) lease; not past its
  // lifetime, in the CLAIM_ORDER of owners; the owner's turn is recorded with it (claimJob). Only the
  // candidates are ranked, never the whole backlog: the owners with queued jobs, found by skipping
  // through jobs_queued_by_owner (one probe per owner, from the first of each owner kind: SQLite
  // seeks a row value by its first column only), each with its oldest claimable job (one writer: no
  // other claimer can hold it), beside the jobs in progress (running, lapsed or parked). CROSS JOIN
  // makes SQLite start from the candidates rather than from every claimable row.
  const claim = prepare(
    `WITH RECURSIVE running AS (${RUNNING_BY_OWNER}),
     owners (owner_kind, owner_id) AS (
       SELECT owner_kind, owner_id FROM (
         SELECT owner_kind, owner_id FROM jobs WHERE kind = :kind AND status = 'queued' AND owner_kind = 'account' ORDER BY owner_id LIMIT 1)
       UNION ALL
       SELECT owner_kind, owner_id FROM (
         SELECT owner_kind, owner_id FROM jobs WHERE kind = :kind AND status = 'queued' AND owner_kind = 'organization' ORDER BY owner_id LIMIT 1)
       UNION ALL
       SELECT n.owner_kind, n.owner_id FROM owners AS o JOIN jobs AS n ON n.id = (
         SELECT id FROM jobs
         WHERE kind = :kind AND status = 'queued' AND owner_kind = o.owner_kind AND owner_id > o.owner_id
         ORDER BY owner_id LIMIT 1)
     ),
     candidates (id) AS (
       SELECT (
         SELECT id FROM jobs
         WHERE kind = :kind AND status = 'queued' AND owner_kind = o.owner_kind AND owner_id = o.owner_id AND expires_at >= :now
         ORDER BY created_at, id LIMIT 1) FROM owners AS o
       UNION ALL
       SELECT id FROM jobs WHERE kind = :kind AND status = 'in_progress' AND (next_attempt_at IS NULL OR next_attempt_at <= :now)
     )
     UPDATE jobs
     SET status = 'in_progress', lease_owner = :worker, lease_until = :lease_until,
       attempts = attempts + CASE WHEN next_attempt_at IS NULL THEN 1 ELSE 0 END, next_attempt_at = NULL, updated_at = :now
     WHERE id = (
       SELECT j.id FROM candidates AS c CROSS JOIN jobs AS j ON j.id = c.id
         LEFT JOIN running AS r ON r.owner_kind = j.owner_kind AND r.owner_id = j.owner_id
         LEFT JOIN job_turns AS t ON t.kind = j.kind AND t.owner_kind = j.owner_kind AND t.owner_id = j.owner_id
       WHERE ${CLAIMABLE}
       ORDER BY ${CLAIM_ORDER}
       LIMIT 1
     )
     RETURNING *`,
  );
  const takeTurn = prepare(
    `INSERT INTO job_turns (kind, owner_kind, owner_id, claimed_at) VALUES (:kind, :owner_kind, :owner_id, :now)
     ON CONFLICT (kind, owner_kind, owner_id) DO UPDATE SET claimed_at = MAX(claimed_at, excluded.claimed_at)`,
  );
  const transition = prepare(
    `UPDATE jobs SET
       status = COALESCE(:status, status),
       result = CASE WHEN :set_result THEN :result ELSE result END,
       payload = CASE WHEN :set_payload THEN :payload ELSE payload END,
       lease_until = CASE WHEN :set_lease THEN :lease_until ELSE lease_until END,
       lease_owner = CASE WHEN :set_lease AND :lease_until IS NULL THEN NULL ELSE lease_owner END,
       dispatched_at = COALESCE(dispatched_at, :dispatched_at),
       cost = COALESCE(:cost, cost),
       checkpoint = CASE WHEN :set_checkpoint THEN :checkpoint ELSE checkpoint END,
       next_attempt_at = CASE WHEN :set_next_attempt THEN :next_attempt_at ELSE next_attempt_at END,
       updated_at = :now
     WHERE id = :id AND status IN (SELECT value FROM json_each(:from_statuses))
       AND (:lease_owner IS NULL OR lease_owner = :lease_owner)
     RETURNING *`,
  );
  const renew = prepare(
    `UPDATE jobs SET lease_until = :lease_until, updated_at = :now
     WHERE id IN (SELECT value FROM json_each(:ids)) AND status = 'in_progress' AND lease_owner = :worker
     RETURNING id`,
  );
  const releaseLeases = prepare(
    `UPDATE jobs SET lease_until = NULL, lease_owner = NULL, updated_at = :now
     WHERE status = 'in_progress' AND next_attempt_at IS NULL AND (lease_owner IS NULL OR lease_owner <> :worker)`,
  );
  // From the open holds (few) to their jobs, rather than through every ended job.
  const endedHolding = prepare(
    `SELECT jobs.* FROM reservations JOIN jobs ON jobs.id = reservations.holder_id
     WHERE reservations.status = 'open' AND reservations.holder_kind = 'job'
       AND jobs.status IN (${ENDED}) AND jobs.updated_at < :ended_before
     ORDER BY jobs.updated_at, jobs.id
     LIMIT :limit`,
  );
  const waitingCounts = prepare(`SELECT ${WAITING_COUNTS} FROM jobs WHERE status IN ('queued', 'in_progress') AND expires_at >= ? GROUP BY kind`);
  const deleteExpired = expiredRowsDeleter(database, 'jobs');
  // An owner's turn at a kind means nothing once it has no job of that kind left: it goes with its last job.
  const deleteIdleTurns = prepare(
    `DELETE FROM job_turns WHERE NOT EXISTS (
       SELECT 1 FROM jobs AS j WHERE j.kind = job_turns.kind AND j.owner_kind = job_turns.owner_kind AND j.owner_id = job_turns.owner_id)`,
  );

  return {
    async createJob(job) {
      const row = database.transaction(
        () =>
          insert.get({
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
          }) as Row,
      );
      return jobFromRow(row);
    },
    async getJob(id) {
      const row = byId.get(id) as Row | undefined;
      return row ? jobFromRow(row) : null;
    },
    async claimJob(kind, worker, now, leaseUntil) {
      const row = claim.get({ kind, worker, now, lease_until: leaseUntil }) as Row | undefined;
      if (!row) return null;
      const job = jobFromRow(row);
      // In the same group commit as the claim (one writer: nothing comes between the two).
      takeTurn.run({ kind, owner_kind: job.owner.kind, owner_id: job.owner.id, now });
      return job;
    },
    async transitionJob(id, from, patch, leaseOwner) {
      if (from.length === 0) return null;
      const row = transition.get({
        id,
        from_statuses: JSON.stringify(from),
        lease_owner: leaseOwner ?? null,
        status: patch.status ?? null,
        set_result: patch.result === undefined ? 0 : 1,
        result: jsonText(patch.result),
        set_payload: patch.payload === undefined ? 0 : 1,
        payload: jsonText(patch.payload),
        set_lease: patch.leaseUntil === undefined ? 0 : 1,
        lease_until: patch.leaseUntil ?? null,
        dispatched_at: patch.dispatchedAt ?? null,
        cost: patch.cost ?? null,
        set_checkpoint: patch.checkpoint === undefined ? 0 : 1,
        checkpoint: jsonText(patch.checkpoint),
        set_next_attempt: patch.nextAttemptAt === undefined ? 0 : 1,
        next_attempt_at: patch.nextAttemptAt ?? null,
        now: patch.now,
      }) as Row | undefined;
      return row ? jobFromRow(row) : null;
    },
    async renewLeases(ids, worker, now, leaseUntil) {
      if (ids.length === 0) return [];
      const rows = renew.all({ ids: JSON.stringify(ids), worker, now, lease_until: leaseUntil }) as Row[];
      return rows.map((row) => row.id as string);
    },
    async releaseLeasesHeldElsewhere(worker, now) {
      return Number(releaseLeases.run({ worker, now }).changes);
    },
    async endedJobsHoldingCredit(endedBefore, limit) {
      // The ledger writes behind (ledger.ts): what it closed in memory must be on file first.
      database.flush();
      return (endedHolding.all({ ended_before: endedBefore, limit }) as Row[]).map(jobFromRow);
    },
    async countWaitingJobs(now) {
      return waitingJobs(waitingCounts.all(now) as Row[]);
    },
    async deleteExpiredJobs(now) {
      const deleted = await deleteExpired(now);
      await database.grouped(() => deleteIdleTurns.run());
      return deleted;
    },
  };
}
