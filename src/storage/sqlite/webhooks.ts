/**
 * Webhook endpoints and their delivery outbox on SQLite. Announcing a job is one unit of the group
 * commit (its deliveries and its mark together); a claim is one UPDATE ... RETURNING, which SQLite's
 * single writer makes exclusive. An idle dispatcher polls with reads only: the claim's write lock is
 * taken only when a read has found a delivery due.
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
  type Row,
} from '../rows.ts';
import type { WebhookStore } from '../store.ts';
import type { SqliteDatabase } from './database.ts';
import { expiredRowsDeleter } from './expiry.ts';

export function sqliteWebhooks(database: SqliteDatabase, now: () => number): WebhookStore {
  const insertEndpoint = database.prepare(
    `INSERT INTO webhook_endpoints (id, owner_kind, owner_id, url, secret, event_types, created_at)
     VALUES (:id, :owner_kind, :owner_id, :url, :secret, :event_types, :created_at)
     RETURNING *`,
  );
  const endpointById = database.prepare('SELECT * FROM webhook_endpoints WHERE id = ?');
  const endpointsOf = database.prepare('SELECT * FROM webhook_endpoints WHERE owner_kind = ? AND owner_id = ? ORDER BY created_at, id');
  const allEndpoints = database.prepare('SELECT * FROM webhook_endpoints ORDER BY created_at, id');
  const deleteEndpoint = database.prepare('DELETE FROM webhook_endpoints WHERE id = ? RETURNING *');
  const unannounced = database.prepare(
    `SELECT * FROM jobs
     WHERE announced_at IS NULL AND status IN ('completed', 'incomplete', 'failed', 'cancelled')
       AND (reservation_id IS NULL OR NOT EXISTS (SELECT 1 FROM reservations r WHERE r.id = jobs.reservation_id AND r.status = 'open'))
     ORDER BY updated_at, id
     LIMIT ?`,
  );
  // The WHERE clause also keeps SQLite from reading ON CONFLICT as a join constraint.
  const insertDeliveries = database.prepare(
    `INSERT INTO webhook_deliveries
       (endpoint_id, event_id, event_type, job_id, body, status, next_attempt_at, created_at, give_up_at, expires_at)
     SELECT e.id, :event_id, :event_type, j.id, :body, 'pending', :next_attempt_at, :created_at, :give_up_at, :expires_at
     FROM jobs j JOIN webhook_endpoints e ON e.owner_kind = j.owner_kind AND e.owner_id = j.owner_id
     WHERE j.id = :job_id AND j.announced_at IS NULL AND j.status IN ('completed', 'incomplete', 'failed', 'cancelled')
       AND (j.reservation_id IS NULL OR NOT EXISTS (SELECT 1 FROM reservations r WHERE r.id = j.reservation_id AND r.status = 'open'))
       AND (e.event_types IS NULL OR EXISTS (SELECT 1 FROM json_each(e.event_types) WHERE value = :event_type))
     ON CONFLICT (endpoint_id, event_id) DO NOTHING`,
  );
  const markAnnounced = database.prepare(
    `UPDATE jobs SET announced_at = :now
     WHERE id = :job_id AND announced_at IS NULL AND status IN ('completed', 'incomplete', 'failed', 'cancelled')
       AND (reservation_id IS NULL OR NOT EXISTS (SELECT 1 FROM reservations r WHERE r.id = jobs.reservation_id AND r.status = 'open'))`,
  );
  const anyDue = database.prepare(
    `SELECT 1 FROM webhook_deliveries
     WHERE status = 'pending' AND next_attempt_at <= :now AND (lease_until IS NULL OR lease_until < :now)
     LIMIT 1`,
  );
  const claim = database.prepare(
    `UPDATE webhook_deliveries
     SET lease_owner = :worker, lease_until = :lease_until, attempts = attempts + 1
     WHERE (endpoint_id, event_id) IN (
       SELECT endpoint_id, event_id FROM webhook_deliveries
       WHERE status = 'pending' AND next_attempt_at <= :now AND (lease_until IS NULL OR lease_until < :now)
       ORDER BY next_attempt_at, created_at
       LIMIT :limit
     )
     RETURNING *,
       (SELECT url FROM webhook_endpoints e WHERE e.id = webhook_deliveries.endpoint_id) AS url,
       (SELECT secret FROM webhook_endpoints e WHERE e.id = webhook_deliveries.endpoint_id) AS secret`,
  );
  const complete = database.prepare(
    `UPDATE webhook_deliveries SET
       status = CASE WHEN :delivered THEN 'delivered' WHEN :next_attempt_at > give_up_at THEN 'failed' ELSE 'pending' END,
       finished_at = CASE WHEN :delivered OR :next_attempt_at > give_up_at THEN :now ELSE NULL END,
       next_attempt_at = COALESCE(:next_attempt_at, next_attempt_at),
       lease_owner = NULL,
       lease_until = NULL,
       last_status = :last_status,
       last_error = :last_error
     WHERE endpoint_id = :endpoint_id AND event_id = :event_id AND status = 'pending' AND lease_owner = :worker
     RETURNING *`,
  );
  const deliveries = database.prepare(
    `SELECT * FROM webhook_deliveries
     WHERE (:endpoint_id IS NULL OR endpoint_id = :endpoint_id) AND (:job_id IS NULL OR job_id = :job_id)
     ORDER BY created_at, event_id, endpoint_id`,
  );
  const pending = database.prepare(`SELECT count(*) AS count FROM webhook_deliveries WHERE status = 'pending'`);
  const deleteExpired = expiredRowsDeleter(database, 'webhook_deliveries');

  return {
    async createWebhookEndpoint(input) {
      const columns = webhookEndpointColumns(input, timeOrderedId('wh'), now());
      return webhookEndpointFromRow(database.transaction(() => insertEndpoint.get(columns) as Row));
    },
    async getWebhookEndpoint(id) {
      const row = endpointById.get(id) as Row | undefined;
      return row ? webhookEndpointFromRow(row) : null;
    },
    async listWebhookEndpoints(owner) {
      const rows = (owner ? endpointsOf.all(owner.kind, owner.id) : allEndpoints.all()) as Row[];
      return rows.map(webhookEndpointFromRow);
    },
    async deleteWebhookEndpoint(id) {
      const row = database.transaction(() => deleteEndpoint.get(id) as Row | undefined);
      return row ? webhookEndpointFromRow(row) : null;
    },
    async unannouncedJobs(limit) {
      // The ledger writes behind (ledger.ts): the holds it finished in memory must be on file first.
      database.flush();
      return (unannounced.all(limit) as Row[]).map(jobFromRow);
    },
    async announceJob({ jobId, event, now: at }) {
      return database.grouped(() => {
        const created = event ? Number(insertDeliveries.run({ job_id: jobId, ...webhookEventColumns(event, at) }).changes) : 0;
        markAnnounced.run({ job_id: jobId, now: at });
        return created;
      });
    },
    async claimWebhookDeliveries({ worker, now: at, leaseUntil, limit }) {
      if (limit <= 0 || anyDue.get({ now: at }) === undefined) return [];
      const rows = await database.grouped(() => claim.all({ worker, now: at, lease_until: leaseUntil, limit }) as Row[]);
      return claimedWebhookDeliveriesFromRows(rows);
    },
    async completeWebhookAttempt({ endpointId, eventId, worker, now: at, outcome }) {
      const row = await database.grouped(
        () => complete.get({ endpoint_id: endpointId, event_id: eventId, worker, now: at, ...webhookAttemptColumns(outcome) }) as Row | undefined,
      );
      return row ? webhookDeliveryFromRow(row) : null;
    },
    async listWebhookDeliveries(filter) {
      const rows = deliveries.all({ endpoint_id: filter.endpointId ?? null, job_id: filter.jobId ?? null }) as Row[];
      return rows.map(webhookDeliveryFromRow);
    },
    async countPendingWebhookDeliveries() {
      return Number((pending.get() as Row).count);
    },
    deleteExpiredWebhookDeliveries: deleteExpired,
  };
}
