/**
 * Webhook endpoints and their delivery outbox on PostgreSQL. Announcing a job is one statement
 * (its deliveries and its mark together: one round trip, where a transaction around the two took
 * four); two instances announcing the same job at once meet on the deliveries' primary key, and the
 * second inserts nothing. A claim locks the due rows with FOR UPDATE SKIP LOCKED, so concurrent
 * claimers on any instance each take different deliveries without waiting on each other.
 */
import { timeOrderedId } from '../../core/ids.ts';
import {
  claimedWebhookDeliveriesFromRows,
  jobFromRow,
  webhookAttemptColumns,
  webhookDeliveryFromRow,
  webhookEndpointColumns,
  webhookEndpointFromRow,
  webhookEventColumns,
} from '../rows.ts';
import type { WebhookStore } from '../store.ts';
import type { PostgresDatabase, Statement } from './database.ts';

const INSERT_ENDPOINT: Statement = {
  name: 'gateway_webhook_endpoints_insert',
  text: `INSERT INTO webhook_endpoints (id, owner_kind, owner_id, url, secret, event_types, created_at)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)
         RETURNING *`,
};
const ENDPOINT_BY_ID: Statement = { name: 'gateway_webhook_endpoints_get', text: 'SELECT * FROM webhook_endpoints WHERE id = $1' };
const ENDPOINTS_OF: Statement = {
  name: 'gateway_webhook_endpoints_of',
  text: 'SELECT * FROM webhook_endpoints WHERE owner_kind = $1 AND owner_id = $2 ORDER BY created_at, id',
};
const ALL_ENDPOINTS: Statement = { name: 'gateway_webhook_endpoints_all', text: 'SELECT * FROM webhook_endpoints ORDER BY created_at, id' };
const DELETE_ENDPOINT: Statement = { name: 'gateway_webhook_endpoints_delete', text: 'DELETE FROM webhook_endpoints WHERE id = $1 RETURNING *' };
const UNANNOUNCED: Statement = {
  name: 'gateway_jobs_unannounced',
  text: `SELECT * FROM jobs
         WHERE announced_at IS NULL AND status IN ('completed', 'incomplete', 'failed', 'cancelled')
       AND (reservation_id IS NULL OR NOT EXISTS (SELECT 1 FROM reservations r WHERE r.id = jobs.reservation_id AND r.status = 'open'))
         ORDER BY updated_at, id
         LIMIT $1`,
};
/** Whether the job has ended and been charged (or released), and is not announced yet. */
const ANNOUNCEABLE = `announced_at IS NULL AND status IN ('completed', 'incomplete', 'failed', 'cancelled')
    AND (reservation_id IS NULL OR NOT EXISTS (SELECT 1 FROM reservations r WHERE r.id = jobs.reservation_id AND r.status = 'open'))`;
const MARK_ANNOUNCED = `UPDATE jobs SET announced_at = $2 WHERE id = $1 AND ${ANNOUNCEABLE}`;
/** The deliveries of an event to each endpoint of the job's owner that takes its type, and the mark. */
const ANNOUNCE: Statement = {
  name: 'gateway_jobs_announce',
  text: `WITH inserted AS (
           INSERT INTO webhook_deliveries
             (endpoint_id, event_id, event_type, job_id, body, status, next_attempt_at, created_at, give_up_at, expires_at)
           SELECT e.id, $3, $4::text, jobs.id, $5, 'pending', $6, $7, $8, $9
           FROM jobs JOIN webhook_endpoints e ON e.owner_kind = jobs.owner_kind AND e.owner_id = jobs.owner_id
           WHERE jobs.id = $1 AND ${ANNOUNCEABLE} AND (e.event_types IS NULL OR e.event_types ? $4::text)
           ON CONFLICT (endpoint_id, event_id) DO NOTHING
           RETURNING 1
         ), marked AS (
           ${MARK_ANNOUNCED}
         )
         SELECT count(*) AS created FROM inserted`,
};
const MARK: Statement = { name: 'gateway_jobs_mark_announced', text: MARK_ANNOUNCED };
// MATERIALIZED: the locking subquery runs once, so a claim never takes more than its limit.
const CLAIM: Statement = {
  name: 'gateway_webhook_deliveries_claim',
  text: `WITH due AS MATERIALIZED (
           SELECT endpoint_id, event_id FROM webhook_deliveries
           WHERE status = 'pending' AND next_attempt_at <= $2 AND (lease_until IS NULL OR lease_until < $2)
           ORDER BY next_attempt_at, created_at
           LIMIT $4
           FOR UPDATE SKIP LOCKED
         )
         UPDATE webhook_deliveries d
         SET lease_owner = $1, lease_until = $3, attempts = d.attempts + 1
         FROM due, webhook_endpoints e
         WHERE d.endpoint_id = due.endpoint_id AND d.event_id = due.event_id AND e.id = d.endpoint_id
         RETURNING d.*, e.url, e.secret`,
};
const COMPLETE: Statement = {
  name: 'gateway_webhook_deliveries_complete',
  text: `UPDATE webhook_deliveries SET
           status = CASE WHEN $5::boolean THEN 'delivered' WHEN $6::bigint > give_up_at THEN 'failed' ELSE 'pending' END,
           finished_at = CASE WHEN $5::boolean OR $6::bigint > give_up_at THEN $4::bigint ELSE NULL END,
           next_attempt_at = COALESCE($6::bigint, next_attempt_at),
           lease_owner = NULL,
           lease_until = NULL,
           last_status = $7,
           last_error = $8
         WHERE endpoint_id = $1 AND event_id = $2 AND status = 'pending' AND lease_owner = $3
         RETURNING *`,
};
const DELIVERIES: Statement = {
  name: 'gateway_webhook_deliveries_list',
  text: `SELECT * FROM webhook_deliveries
         WHERE ($1::text IS NULL OR endpoint_id = $1) AND ($2::text IS NULL OR job_id = $2)
         ORDER BY created_at, event_id, endpoint_id`,
};
const PENDING: Statement = {
  name: 'gateway_webhook_deliveries_pending',
  text: `SELECT count(*) AS count FROM webhook_deliveries WHERE status = 'pending'`,
};
const DELETE_EXPIRED: Statement = { name: 'gateway_webhook_deliveries_delete_expired', text: 'DELETE FROM webhook_deliveries WHERE expires_at < $1' };

export function postgresWebhooks(database: PostgresDatabase, now: () => number): WebhookStore {
  return {
    async createWebhookEndpoint(input) {
      const columns = webhookEndpointColumns(input, timeOrderedId('wh'), now());
      const values = [columns.id, columns.owner_kind, columns.owner_id, columns.url, columns.secret, columns.event_types, columns.created_at];
      return webhookEndpointFromRow((await database.query(INSERT_ENDPOINT, values)).rows[0]);
    },
    async getWebhookEndpoint(id) {
      const row = (await database.query(ENDPOINT_BY_ID, [id])).rows[0];
      return row ? webhookEndpointFromRow(row) : null;
    },
    async listWebhookEndpoints(owner) {
      const { rows } = owner ? await database.query(ENDPOINTS_OF, [owner.kind, owner.id]) : await database.query(ALL_ENDPOINTS, []);
      return rows.map(webhookEndpointFromRow);
    },
    async deleteWebhookEndpoint(id) {
      const row = (await database.query(DELETE_ENDPOINT, [id])).rows[0];
      return row ? webhookEndpointFromRow(row) : null;
    },
    async unannouncedJobs(limit) {
      return (await database.query(UNANNOUNCED, [limit])).rows.map(jobFromRow);
    },
    async announceJob({ jobId, event, now: at }) {
      if (!event) {
        await database.query(MARK, [jobId, at]);
        return 0;
      }
      const columns = webhookEventColumns(event, at);
      const values = [
        jobId,
        at,
        columns.event_id,
        columns.event_type,
        columns.body,
        columns.next_attempt_at,
        columns.created_at,
        columns.give_up_at,
        columns.expires_at,
      ];
      return Number((await database.query(ANNOUNCE, values)).rows[0].created);
    },
    async claimWebhookDeliveries({ worker, now: at, leaseUntil, limit }) {
      if (limit <= 0) return [];
      return claimedWebhookDeliveriesFromRows((await database.query(CLAIM, [worker, at, leaseUntil, limit])).rows);
    },
    async completeWebhookAttempt({ endpointId, eventId, worker, now: at, outcome }) {
      const columns = webhookAttemptColumns(outcome);
      const values = [endpointId, eventId, worker, at, columns.delivered, columns.next_attempt_at, columns.last_status, columns.last_error];
      const row = (await database.query(COMPLETE, values)).rows[0];
      return row ? webhookDeliveryFromRow(row) : null;
    },
    async listWebhookDeliveries(filter) {
      return (await database.query(DELIVERIES, [filter.endpointId ?? null, filter.jobId ?? null])).rows.map(webhookDeliveryFromRow);
    },
    async countPendingWebhookDeliveries() {
      return Number((await database.query(PENDING, [])).rows[0].count);
    },
    async deleteExpiredWebhookDeliveries(at) {
      return (await database.query(DELETE_EXPIRED, [at])).rowCount ?? 0;
    },
  };
}
