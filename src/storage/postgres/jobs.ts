/**
 * Background jobs on PostgreSQL. A claim locks the first claimable row in the claim order (store.ts,
 * claimJob) with FOR UPDATE SKIP LOCKED, so concurrent claimers on any instance each take a
 * different job without waiting on each other.
 */
import { ENDED_JOB_STATUSES, type JobStore } from '../store.ts';
import { jobFromRow, jsonText, WAITING_COUNTS, waitingJobs } from '../rows.ts';
import type { PostgresDatabase, Statement } from './database.ts';
import { LIVE_SESSION_LAPSES, sessionOpen } from './instances.ts';

/**
 * Queued jobs of each owner a claim ranks first: more than one, for the claimers of other instances
 * that meet on the first. When every candidate was locked by them while some owner has queued jobs,
 * the claim looks again at every queued job (ALL_QUEUED), as it must not answer "nothing claimable"
 * while a job waits.
 */
const CANDIDATES_PER_OWNER = 4;
const ALL_QUEUED = 2 ** 31 - 1;

const INSERT: Statement = {
  name: 'gateway_jobs_insert',
  text: `INSERT INTO jobs (id, kind, owner_kind, owner_id, key_id, status, payload, result, reservation_id, created_at, updated_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11)
         RETURNING *`,
};
const BY_ID: Statement = { name: 'gateway_jobs_get', text: 'SELECT * FROM jobs WHERE id = $1' };
// Claimable: queued, parked and due, or in progress with a lapsed (or no) lease; not past its
// lifetime. A lapsed lease whose owner is a live instance (its database session open: instances.ts)
// is left to it until LIVE_SESSION_LAPSES leases have passed since its last renewal (the claimer's
// lease length stands for the owner's): an instance starved of CPU on a busy host renews late, and
// a job taken from it would end failed while its own call goes on. The owner with the fewest jobs
// of the kind under a live lease (a parked job holds none) goes first, then the owner served
// longest ago (or never: job_turns, recorded with the claim), then the oldest job. Only the
// candidates are ranked, never the whole backlog: the owners with queued jobs are found by skipping
// through jobs_queued_by_owner (one probe per owner), and of each the oldest $5 are taken
// (CANDIDATES_PER_OWNER), beside the jobs in progress (running, lapsed or parked: a few per slot).
// The claimable test is repeated on the locked row, which another claimer may have changed
// meanwhile; it is written as a CASE so that the planner cannot match it to a partial index of the
// jobs and scan the backlog through it (which it did when the table's statistics were stale): the
// candidates' ids, through the primary key, are then its only way in. The turn is recorded when
// another owner has queued jobs, and otherwise when its record is older than TURN_REFRESH_MS: the
// upsert locks the owner's job_turns row until the claim commits, so recording every claim queued
// one owner's claims, on every instance, behind one row and one WAL flush each
// (docs/performance.md, "Background jobs on PostgreSQL"). While an owner is the only one waiting
// its turn cannot be compared with another's, and when another comes, the record it is compared
// with is at most that old.
const TURN_REFRESH_MS = 1_000;
const CLAIM: Statement = {
  name: 'gateway_jobs_claim',
  text: `WITH RECURSIVE running AS (
           SELECT owner_kind, owner_id, COUNT(*) AS n FROM jobs
           WHERE kind = $1 AND lease_owner IS NOT NULL AND status = 'in_progress' AND lease_until >= $3
           GROUP BY owner_kind, owner_id
         ), owners AS (
           (SELECT owner_kind, owner_id FROM jobs WHERE kind = $1 AND status = 'queued' ORDER BY owner_kind, owner_id LIMIT 1)
           UNION ALL
           SELECT next.owner_kind, next.owner_id FROM owners AS o CROSS JOIN LATERAL (
             SELECT owner_kind, owner_id FROM jobs
             WHERE kind = $1 AND status = 'queued' AND (owner_kind, owner_id) > (o.owner_kind, o.owner_id)
             ORDER BY owner_kind, owner_id LIMIT 1
           ) AS next
         ), candidates AS (
           SELECT oldest.id FROM owners AS o CROSS JOIN LATERAL (
             SELECT id FROM jobs
             WHERE kind = $1 AND status = 'queued' AND owner_kind = o.owner_kind AND owner_id = o.owner_id AND expires_at >= $3
             ORDER BY created_at, id LIMIT $5
           ) AS oldest
           UNION ALL
           SELECT id FROM jobs WHERE kind = $1 AND status = 'in_progress' AND (next_attempt_at IS NULL OR next_attempt_at <= $3)
         ), claimed AS (
           UPDATE jobs
           SET status = 'in_progress', lease_owner = $2, lease_until = $4,
             attempts = attempts + CASE WHEN next_attempt_at IS NULL THEN 1 ELSE 0 END, next_attempt_at = NULL, updated_at = $3
           WHERE id = (
             SELECT j.id FROM jobs AS j
               LEFT JOIN running AS r ON r.owner_kind = j.owner_kind AND r.owner_id = j.owner_id
               LEFT JOIN job_turns AS t ON t.kind = j.kind AND t.owner_kind = j.owner_kind AND t.owner_id = j.owner_id
             WHERE j.id = ANY (ARRAY(SELECT id FROM candidates)) AND j.kind = $1 AND CASE
               WHEN j.expires_at < $3 THEN false
               WHEN j.status = 'queued' THEN true
               WHEN j.status <> 'in_progress' THEN false
               WHEN j.next_attempt_at IS NULL THEN j.lease_until IS NULL OR (j.lease_until < $3 AND (
                 j.lease_owner IS NULL OR j.lease_owner = $2
                 OR j.lease_until < $3 - ${LIVE_SESSION_LAPSES - 1} * ($4::bigint - $3::bigint)
                 OR NOT EXISTS (SELECT 1 FROM instances AS i WHERE i.id = j.lease_owner AND ${sessionOpen('i')})))
               ELSE j.next_attempt_at <= $3
             END
             ORDER BY COALESCE(r.n, 0), COALESCE(t.claimed_at, 0), j.created_at, j.id
             LIMIT 1
             FOR UPDATE OF j SKIP LOCKED
           )
           RETURNING *
         ), turn AS (
           INSERT INTO job_turns (kind, owner_kind, owner_id, claimed_at)
           SELECT kind, owner_kind, owner_id, $3 FROM claimed AS c
           WHERE EXISTS (SELECT 1 FROM owners AS o WHERE (o.owner_kind, o.owner_id) <> (c.owner_kind, c.owner_id))
             OR NOT EXISTS (
               SELECT 1 FROM job_turns AS t
               WHERE t.kind = c.kind AND t.owner_kind = c.owner_kind AND t.owner_id = c.owner_id AND t.claimed_at > $3 - ${TURN_REFRESH_MS}
             )
           ON CONFLICT (kind, owner_kind, owner_id) DO UPDATE SET claimed_at = GREATEST(job_turns.claimed_at, excluded.claimed_at)
         )
         SELECT claimed.*, (SELECT count(*) FROM owners) AS waiting_owners FROM (SELECT 1) AS one LEFT JOIN claimed ON true`,
};
const TRANSITION: Statement = {
  name: 'gateway_jobs_transition',
  text: `UPDATE jobs SET
           status = COALESCE($3, status),
           result = CASE WHEN $4::boolean THEN $5::json ELSE result END,
           payload = CASE WHEN $6::boolean THEN $7::json ELSE payload END,
           lease_until = CASE WHEN $8::boolean THEN $9::bigint ELSE lease_until END,
           lease_owner = CASE WHEN $8::boolean AND $9::bigint IS NULL THEN NULL ELSE lease_owner END,
           dispatched_at = COALESCE(dispatched_at, $11::bigint),
           cost = COALESCE($12::bigint, cost),
           checkpoint = CASE WHEN $14::boolean THEN $15::json ELSE checkpoint END,
           next_attempt_at = CASE WHEN $16::boolean THEN $17::bigint ELSE next_attempt_at END,
           updated_at = $10
         WHERE id = $1 AND status = ANY ($2::text[]) AND ($13::text IS NULL OR lease_owner = $13::text)
         RETURNING *`,
};
const RENEW: Statement = {
  name: 'gateway_jobs_renew',
  text: `UPDATE jobs SET lease_until = $4, updated_at = $3
         WHERE id = ANY ($1::text[]) AND status = 'in_progress' AND lease_owner = $2
         RETURNING id`,
};
const RELEASE_LEASES: Statement = {
  name: 'gateway_jobs_release_leases',
  text: `UPDATE jobs SET lease_until = NULL, lease_owner = NULL, updated_at = $2
         WHERE status = 'in_progress' AND next_attempt_at IS NULL AND (lease_owner IS NULL OR lease_owner <> $1)`,
};
// From the open holds (few, indexed by holder) to their jobs, rather than through every ended job.
const ENDED_HOLDING: Statement = {
  name: 'gateway_jobs_ended_holding',
  text: `SELECT jobs.* FROM reservations JOIN jobs ON jobs.id = reservations.holder_id
         WHERE reservations.status = 'open' AND reservations.holder_kind = 'job'
           AND jobs.status = ANY ($3::text[]) AND jobs.updated_at < $1
         ORDER BY jobs.updated_at, jobs.id
         LIMIT $2`,
};
const WAITING: Statement = {
  name: 'gateway_jobs_waiting_counts',
  text: `SELECT ${WAITING_COUNTS} FROM jobs WHERE status IN ('queued', 'in_progress') AND expires_at >= $1 GROUP BY kind`,
};
const DELETE_EXPIRED: Statement = { name: 'gateway_jobs_delete_expired', text: 'DELETE FROM jobs WHERE expires_at < $1' };
/** An owner's turn at a kind means nothing once it has no job of that kind left: it goes with its last job. */
const DELETE_IDLE_TURNS: Statement = {
  name: 'gateway_jobs_delete_idle_turns',
  text: `DELETE FROM job_turns AS t WHERE NOT EXISTS (
           SELECT 1 FROM jobs AS j WHERE j.kind = t.kind AND j.owner_kind = t.owner_kind AND j.owner_id = t.owner_id)`,
};

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
      const claim = async (perOwner: number) => (await database.query(CLAIM, [kind, worker, now, leaseUntil, perOwner])).rows[0];
      const first = await claim(CANDIDATES_PER_OWNER);
      if (first.id !== null) return jobFromRow(first);
      // No owner has a queued job: looking at every queued job would find none either (an idle
      // poll is one round trip, not two).
      if (Number(first.waiting_owners) === 0) return null;
      const second = await claim(ALL_QUEUED);
      return second.id !== null ? jobFromRow(second) : null;
    },
    async transitionJob(id, from, patch, leaseOwner) {
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
        patch.dispatchedAt ?? null,
        patch.cost ?? null,
        leaseOwner ?? null,
        patch.checkpoint !== undefined,
        jsonText(patch.checkpoint),
        patch.nextAttemptAt !== undefined,
        patch.nextAttemptAt ?? null,
      ];
      const row = (await database.query(TRANSITION, values)).rows[0];
      return row ? jobFromRow(row) : null;
    },
    async renewLeases(ids, worker, now, leaseUntil) {
      if (ids.length === 0) return [];
      const { rows } = await database.query(RENEW, [ids, worker, now, leaseUntil]);
      return rows.map((row) => row.id as string);
    },
    async releaseLeasesHeldElsewhere(worker, now) {
      return (await database.query(RELEASE_LEASES, [worker, now])).rowCount ?? 0;
    },
    async endedJobsHoldingCredit(endedBefore, limit) {
      const { rows } = await database.query(ENDED_HOLDING, [endedBefore, limit, ENDED_JOB_STATUSES]);
      return rows.map(jobFromRow);
    },
    async countWaitingJobs(now) {
      return waitingJobs((await database.query(WAITING, [now])).rows);
    },
    async deleteExpiredJobs(now) {
      const deleted = (await database.query(DELETE_EXPIRED, [now])).rowCount ?? 0;
      await database.query(DELETE_IDLE_TURNS, []);
      return deleted;
    },
  };
}
