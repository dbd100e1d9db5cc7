/**
 * The SQLite schema, version by version. Kept line-for-line parallel to postgres.ts: the same
 * tables, columns, constraints and indexes. STRICT tables make SQLite enforce the declared types, so
 * a floating-point value can never land in a money column; booleans are 0/1 integers and JSON
 * documents are TEXT. The small, hot tables of the request path are WITHOUT ROWID: the primary key
 * is then the table itself, so a write touches one B-tree page fewer, and in WAL mode the cost of
 * a commit grows with the pages it writes.
 */
import type { Migration } from './migration.ts';

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  community_supply INTEGER NOT NULL DEFAULT 0 CHECK (community_supply IN (0, 1)),
  training_use INTEGER NOT NULL DEFAULT 0 CHECK (training_use IN (0, 1)),
  rate_numerator INTEGER CHECK (rate_numerator >= 0),
  rate_denominator INTEGER CHECK (rate_denominator > 0),
  created_at INTEGER NOT NULL,
  CHECK ((rate_numerator IS NULL) = (rate_denominator IS NULL))
) STRICT;

CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  organization_id TEXT REFERENCES organizations (id),
  community_supply INTEGER NOT NULL DEFAULT 0 CHECK (community_supply IN (0, 1)),
  training_use INTEGER NOT NULL DEFAULT 0 CHECK (training_use IN (0, 1)),
  rate_numerator INTEGER CHECK (rate_numerator >= 0),
  rate_denominator INTEGER CHECK (rate_denominator > 0),
  created_at INTEGER NOT NULL,
  CHECK ((rate_numerator IS NULL) = (rate_denominator IS NULL))
) STRICT;

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT NOT NULL,
  name TEXT,
  hash TEXT NOT NULL,
  display_prefix TEXT NOT NULL,
  scopes TEXT,
  allowed_models TEXT,
  limits TEXT,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
) STRICT;
CREATE UNIQUE INDEX api_keys_hash ON api_keys (hash);
CREATE INDEX api_keys_owner ON api_keys (owner_kind, owner_id);

-- One row per owner: the running totals the ledger and the open reservations add up to. The
-- CHECKs make "available never negative" a property of the data, not only of the code.
CREATE TABLE wallets (
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT NOT NULL,
  balance INTEGER NOT NULL DEFAULT 0 CHECK (balance >= 0),
  reserved INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0 AND reserved <= balance),
  PRIMARY KEY (owner_kind, owner_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE ledger_entries (
  id TEXT PRIMARY KEY,
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('credit', 'charge')),
  amount INTEGER NOT NULL CHECK (amount > 0),
  reservation_id TEXT,
  request_id TEXT,
  note TEXT,
  created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX ledger_entries_owner ON ledger_entries (owner_kind, owner_id, id);

CREATE TABLE reservations (
  id TEXT PRIMARY KEY,
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT NOT NULL,
  amount INTEGER NOT NULL CHECK (amount >= 0),
  request_id TEXT,
  status TEXT NOT NULL CHECK (status IN ('open', 'settled', 'released')),
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  closed_at INTEGER
) STRICT, WITHOUT ROWID;
CREATE INDEX reservations_open_expiry ON reservations (expires_at) WHERE status = 'open';

CREATE TABLE request_log (
  id TEXT PRIMARY KEY,
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  route TEXT NOT NULL,
  model TEXT,
  provider TEXT,
  upstream_model TEXT,
  status TEXT NOT NULL CHECK (status IN ('completed', 'failed', 'cancelled', 'incomplete')),
  http_status INTEGER NOT NULL,
  stream INTEGER NOT NULL CHECK (stream IN (0, 1)),
  input_tokens INTEGER NOT NULL,
  cache_read_tokens INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL,
  search_units INTEGER NOT NULL,
  cost INTEGER NOT NULL,
  error_code TEXT,
  created_at INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  first_byte_ms INTEGER,
  output TEXT,
  blob_keys TEXT NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX request_log_owner_time ON request_log (owner_kind, owner_id, created_at);
CREATE INDEX request_log_expiry ON request_log (expires_at);

CREATE TABLE idempotency_records (
  key_id TEXT NOT NULL,
  route TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  body_hash TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('in_progress', 'completed')),
  locked_until INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  response_status INTEGER,
  response_headers TEXT,
  response_body TEXT,
  PRIMARY KEY (key_id, route, idempotency_key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_records_expiry ON idempotency_records (expires_at);

CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('response', 'video')),
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('queued', 'in_progress', 'completed', 'incomplete', 'failed', 'cancelled')),
  payload TEXT,
  result TEXT,
  reservation_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  lease_owner TEXT,
  lease_until INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX jobs_claimable ON jobs (kind, created_at) WHERE status IN ('queued', 'in_progress');
CREATE INDEX jobs_expiry ON jobs (expires_at);

CREATE TABLE change_feed (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL
) STRICT;
INSERT INTO change_feed (id, version) VALUES (1, 0);
`,
  },
  {
    version: 2,
    name: 'reservation holders',
    // Who holds each open reservation, so that the holds of a dead server are released when the next
    // one takes the file (docs/billing.md). NULL for the rows of earlier versions. PostgreSQL also
    // gets the instances table of its heartbeats; SQLite needs none (one server per file).
    sql: `
ALTER TABLE reservations ADD COLUMN holder_kind TEXT CHECK (holder_kind IN ('instance'));
ALTER TABLE reservations ADD COLUMN holder_id TEXT CHECK ((holder_kind IS NULL) = (holder_id IS NULL));
`,
  },
  {
    version: 3,
    name: 'served model names',
    sql: `
-- The public names (ids and aliases) of the catalog the last started server serves, each with its
-- model id: the command line checks model names against them, not against a config it may not see.
CREATE TABLE served_models (
  name TEXT PRIMARY KEY,
  model_id TEXT NOT NULL
) WITHOUT ROWID, STRICT;
`,
  },
  {
    version: 4,
    name: 'one-hour cache writes',
    // The part of cache_write_tokens written with a 1-hour lifetime, billed at its own rate
    // (docs/billing.md). NULL when the provider reported no split, and for the rows of earlier versions.
    sql: `
ALTER TABLE request_log ADD COLUMN cache_write_1h_tokens INTEGER CHECK (cache_write_1h_tokens BETWEEN 0 AND cache_write_tokens);
`,
  },
  {
    version: 5,
    name: 'job holds',
    // Background jobs hold credit in their own name (holder kind 'job'), so that no instance's end
    // releases a job's hold (docs/jobs.md); a job records when its work was first sent upstream and
    // the cost it is to be charged. SQLite cannot change a CHECK in place: the reservations table is
    // rebuilt (nothing references it).
    sql: `
CREATE TABLE reservations_v5 (
  id TEXT PRIMARY KEY,
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT NOT NULL,
  amount INTEGER NOT NULL CHECK (amount >= 0),
  request_id TEXT,
  status TEXT NOT NULL CHECK (status IN ('open', 'settled', 'released')),
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  closed_at INTEGER,
  holder_kind TEXT CHECK (holder_kind IN ('instance', 'job')),
  holder_id TEXT CHECK ((holder_kind IS NULL) = (holder_id IS NULL))
) STRICT, WITHOUT ROWID;
INSERT INTO reservations_v5 SELECT id, owner_kind, owner_id, amount, request_id, status, created_at, expires_at, closed_at, holder_kind, holder_id FROM reservations;
DROP TABLE reservations;
ALTER TABLE reservations_v5 RENAME TO reservations;
CREATE INDEX reservations_open_expiry ON reservations (expires_at) WHERE status = 'open';
ALTER TABLE jobs ADD COLUMN dispatched_at INTEGER;
ALTER TABLE jobs ADD COLUMN cost INTEGER CHECK (cost >= 0);
`,
  },
  {
    version: 6,
    name: 'webhooks',
    // Webhook endpoints, and an outbox of deliveries filled from the jobs table (src/webhooks/): a job
    // whose end has been turned into deliveries gets announced_at, and the partial index keeps the
    // scan for the others small. Jobs that had already ended are taken as announced, so that an
    // upgrade sends no events for them. A delivery is unique per endpoint and event, which makes
    // announcing a job twice (two instances, or a crash between the inserts and the mark) harmless.
    sql: `
ALTER TABLE jobs ADD COLUMN announced_at INTEGER;
UPDATE jobs SET announced_at = updated_at WHERE status IN ('completed', 'incomplete', 'failed', 'cancelled');
CREATE INDEX jobs_unannounced ON jobs (updated_at) WHERE announced_at IS NULL AND status IN ('completed', 'incomplete', 'failed', 'cancelled');

CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT NOT NULL,
  url TEXT NOT NULL,
  secret TEXT NOT NULL,
  event_types TEXT,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (owner_kind, owner_id);

CREATE TABLE webhook_deliveries (
  endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  job_id TEXT NOT NULL,
  -- TEXT, not JSON: the exact bytes that were signed, sent again on every attempt.
  body TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  lease_owner TEXT,
  lease_until INTEGER,
  last_status INTEGER,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  give_up_at INTEGER NOT NULL,
  finished_at INTEGER,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (endpoint_id, event_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_job ON webhook_deliveries (job_id);
CREATE INDEX webhook_deliveries_expiry ON webhook_deliveries (expires_at);
`,
  },
  {
    version: 7,
    name: 'limits',
    // The limits an organization carries over all its keys, like a key's `limits` (docs/limits.md).
    // The key behind each hold and charge, so that a key's spend limits are counted from the ledger;
    // NULL for credits and for rows of earlier versions. The indexes serve the sums a capped hold
    // reads: a key's charges since a time and its open holds, an owner's charges since a time.
    sql: `
ALTER TABLE organizations ADD COLUMN limits TEXT;
ALTER TABLE reservations ADD COLUMN key_id TEXT;
ALTER TABLE ledger_entries ADD COLUMN key_id TEXT;
CREATE INDEX ledger_entries_key_time ON ledger_entries (key_id, created_at) WHERE kind = 'charge' AND key_id IS NOT NULL;
CREATE INDEX ledger_entries_charge_time ON ledger_entries (owner_kind, owner_id, created_at) WHERE kind = 'charge';
CREATE INDEX reservations_open_key ON reservations (key_id) WHERE status = 'open' AND key_id IS NOT NULL;
`,
  },
  {
    version: 8,
    name: 'blobs',
    // On SQLite, stored outputs are files in the data dir (storage/blobs.ts), never in the database:
    // this version only keeps the numbering parallel with PostgreSQL's, whose blobs are tables.
    sql: `
SELECT 1;
`,
  },
  {
    version: 9,
    name: 'job checkpoints',
    // What a job's worker recorded of work that outlives it upstream (a video generation's operation),
    // so that a worker taking the job over goes on with it instead of starting it again (src/jobs/).
    sql: `
ALTER TABLE jobs ADD COLUMN checkpoint TEXT;
`,
  },
  {
    version: 10,
    name: 'wallet group commits',
    // On SQLite the process decides the ledger in memory and writes it behind (sqlite/wallet-book.ts):
    // this version only keeps the numbering parallel with PostgreSQL's, whose group commit is a function.
    sql: `
SELECT 1;
`,
  },
  {
    version: 11,
    name: 'request cost beyond the hold',
    // What an upstream reported beyond the request's hold (it ignored max_tokens, or counted the
    // prompt differently): priced, recorded, never charged (docs/billing.md, "Money caps").
    sql: `
ALTER TABLE request_log ADD COLUMN over_hold INTEGER NOT NULL DEFAULT 0 CHECK (over_hold >= 0);
`,
  },
  {
    version: 12,
    name: 'dashboard people and audit',
    // The dashboard's people (src/storage/people.ts): users with a role, sessions (only the hash of
    // the cookie), the single-use tokens of invitations and sign-in links (only their hashes), and
    // the audit log: one hash-chained row per change, which triggers keep append-only.
    sql: `
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  display_name TEXT,
  role TEXT NOT NULL CHECK (role IN ('operator', 'member')),
  owner_kind TEXT CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT,
  password_hash TEXT,
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  created_at INTEGER NOT NULL,
  last_sign_in_at INTEGER,
  CHECK ((role = 'member') = (owner_kind IS NOT NULL) AND (owner_kind IS NULL) = (owner_id IS NULL))
) STRICT;
CREATE INDEX users_owner ON users (owner_kind, owner_id, id);
-- The dashboard pages an organization's accounts.
CREATE INDEX accounts_organization ON accounts (organization_id, id);

CREATE TABLE sessions (
  id_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  csrf_token TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expiry ON sessions (expires_at);

CREATE TABLE user_tokens (
  id TEXT PRIMARY KEY,
  hash TEXT NOT NULL UNIQUE,
  purpose TEXT NOT NULL CHECK (purpose IN ('invitation', 'sign_in', 'password_reset')),
  user_id TEXT REFERENCES users (id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  role TEXT CHECK (role IN ('operator', 'member')),
  owner_kind TEXT CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER
) STRICT;
CREATE INDEX user_tokens_open ON user_tokens (purpose, id) WHERE used_at IS NULL;

CREATE TABLE audit_log (
  seq INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  actor_kind TEXT NOT NULL,
  actor_id TEXT,
  actor_label TEXT NOT NULL,
  action TEXT NOT NULL,
  target_kind TEXT,
  target_id TEXT,
  changes TEXT,
  source TEXT,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL
) STRICT;
CREATE INDEX audit_log_action_source ON audit_log (action, source, at);
CREATE INDEX audit_log_action_target ON audit_log (action, target_id, at);
CREATE INDEX audit_log_target ON audit_log (target_id, seq);
CREATE INDEX audit_log_actor ON audit_log (actor_label, seq);
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
`,
  },
  {
    version: 13,
    name: 'provider usage of a request',
    // The usage object as the provider reported it, as JSON text, so that a disputed charge traces
    // back to what the provider said (docs/billing.md, "Request log").
    sql: `
ALTER TABLE request_log ADD COLUMN provider_usage TEXT;
`,
  },
  {
    version: 14,
    name: 'usage rollups',
    // Usage per hour and per day by owner, key, model, provider endpoint, endpoint family and status,
    // kept up by a trigger as request log rows are written: in the same group commit, never a scan
    // of request rows for a usage page (docs/dashboard.md, "Usage"). '' stands for none in a key
    // column, as a NULL would never match ON CONFLICT.
    sql: `
ALTER TABLE request_log ADD COLUMN images INTEGER NOT NULL DEFAULT 0 CHECK (images >= 0);
ALTER TABLE request_log ADD COLUMN video_seconds INTEGER NOT NULL DEFAULT 0 CHECK (video_seconds >= 0);
ALTER TABLE request_log ADD COLUMN cache_savings INTEGER NOT NULL DEFAULT 0 CHECK (cache_savings >= 0);

CREATE TABLE usage_hourly (
  period INTEGER NOT NULL,
  owner_kind TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  organization_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  provider TEXT NOT NULL,
  route TEXT NOT NULL,
  status TEXT NOT NULL,
  requests INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_read_tokens INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL,
  images INTEGER NOT NULL,
  video_seconds INTEGER NOT NULL,
  search_units INTEGER NOT NULL,
  cost INTEGER NOT NULL,
  cache_savings INTEGER NOT NULL,
  PRIMARY KEY (period, owner_kind, owner_id, key_id, model, provider, route, status)
) STRICT, WITHOUT ROWID;
CREATE INDEX usage_hourly_owner ON usage_hourly (owner_kind, owner_id, period);
CREATE INDEX usage_hourly_organization ON usage_hourly (organization_id, period);
CREATE INDEX usage_hourly_key ON usage_hourly (key_id, period);

CREATE TABLE usage_daily (
  period INTEGER NOT NULL,
  owner_kind TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  organization_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  provider TEXT NOT NULL,
  route TEXT NOT NULL,
  status TEXT NOT NULL,
  requests INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_read_tokens INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL,
  images INTEGER NOT NULL,
  video_seconds INTEGER NOT NULL,
  search_units INTEGER NOT NULL,
  cost INTEGER NOT NULL,
  cache_savings INTEGER NOT NULL,
  PRIMARY KEY (period, owner_kind, owner_id, key_id, model, provider, route, status)
) STRICT, WITHOUT ROWID;
CREATE INDEX usage_daily_owner ON usage_daily (owner_kind, owner_id, period);
CREATE INDEX usage_daily_organization ON usage_daily (organization_id, period);
CREATE INDEX usage_daily_key ON usage_daily (key_id, period);

CREATE TRIGGER request_log_usage_rollups AFTER INSERT ON request_log BEGIN
  INSERT INTO usage_hourly (period, owner_kind, owner_id, organization_id, key_id, model, provider, route, status, requests, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, images, video_seconds, search_units, cost, cache_savings)
  VALUES (NEW.created_at - NEW.created_at % 3600000, NEW.owner_kind, NEW.owner_id,
    CASE NEW.owner_kind WHEN 'organization' THEN NEW.owner_id ELSE coalesce((SELECT organization_id FROM accounts WHERE id = NEW.owner_id), '') END,
    NEW.key_id, coalesce(NEW.model, ''), coalesce(NEW.provider, ''), NEW.route, NEW.status, 1, NEW.input_tokens, NEW.output_tokens, NEW.cache_read_tokens, NEW.cache_write_tokens, NEW.reasoning_tokens, NEW.images, NEW.video_seconds, NEW.search_units, NEW.cost, NEW.cache_savings)
  ON CONFLICT DO UPDATE SET
    requests = requests + excluded.requests,
    input_tokens = input_tokens + excluded.input_tokens,
    output_tokens = output_tokens + excluded.output_tokens,
    cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
    cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
    reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens,
    images = images + excluded.images,
    video_seconds = video_seconds + excluded.video_seconds,
    search_units = search_units + excluded.search_units,
    cost = cost + excluded.cost,
    cache_savings = cache_savings + excluded.cache_savings;
  INSERT INTO usage_daily (period, owner_kind, owner_id, organization_id, key_id, model, provider, route, status, requests, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, images, video_seconds, search_units, cost, cache_savings)
  VALUES (NEW.created_at - NEW.created_at % 86400000, NEW.owner_kind, NEW.owner_id,
    CASE NEW.owner_kind WHEN 'organization' THEN NEW.owner_id ELSE coalesce((SELECT organization_id FROM accounts WHERE id = NEW.owner_id), '') END,
    NEW.key_id, coalesce(NEW.model, ''), coalesce(NEW.provider, ''), NEW.route, NEW.status, 1, NEW.input_tokens, NEW.output_tokens, NEW.cache_read_tokens, NEW.cache_write_tokens, NEW.reasoning_tokens, NEW.images, NEW.video_seconds, NEW.search_units, NEW.cost, NEW.cache_savings)
  ON CONFLICT DO UPDATE SET
    requests = requests + excluded.requests,
    input_tokens = input_tokens + excluded.input_tokens,
    output_tokens = output_tokens + excluded.output_tokens,
    cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
    cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
    reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens,
    images = images + excluded.images,
    video_seconds = video_seconds + excluded.video_seconds,
    search_units = search_units + excluded.search_units,
    cost = cost + excluded.cost,
    cache_savings = cache_savings + excluded.cache_savings;
END;
`,
  },
  {
    version: 15,
    name: 'parked jobs and the turns of owners',
    // A start-and-poll job (a video) is parked between two looks at its operation: no lease, and the
    // time its next step is due (src/jobs/runner.ts). Claims rank owners by the jobs they have
    // running, then by their last claim (job_turns), so that one owner's backlog does not hold
    // another's jobs back (docs/jobs.md, "Scheduling").
    sql: `
ALTER TABLE jobs ADD COLUMN next_attempt_at INTEGER;
CREATE TABLE job_turns (
  kind TEXT NOT NULL,
  owner_kind TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  claimed_at INTEGER NOT NULL,
  PRIMARY KEY (kind, owner_kind, owner_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX jobs_queued ON jobs (kind, created_at) WHERE status = 'queued';
CREATE INDEX jobs_in_flight ON jobs (kind, next_attempt_at) WHERE status = 'in_progress';
CREATE INDEX jobs_leased ON jobs (kind, owner_kind, owner_id) WHERE lease_owner IS NOT NULL;
DROP INDEX jobs_claimable;
`,
  },
  {
    version: 16,
    name: 'request attempts and the dashboard views',
    // Each request's upstream attempts as JSON text (the dashboard's waterfall), and the indexes the
    // dashboard's request log, hold lookup and job lists page through (docs/dashboard.md).
    sql: `
ALTER TABLE request_log ADD COLUMN attempts TEXT;
CREATE INDEX request_log_time ON request_log (created_at, id);
CREATE INDEX reservations_request ON reservations (request_id) WHERE request_id IS NOT NULL;
CREATE INDEX ledger_entries_reservation ON ledger_entries (reservation_id) WHERE reservation_id IS NOT NULL;
CREATE INDEX jobs_owner_time ON jobs (owner_kind, owner_id, created_at, id);
CREATE INDEX jobs_time ON jobs (created_at, id);
`,
  },
  {
    version: 17,
    name: 'open job kinds',
    // A job's kind is any kind a handler is registered for (src/jobs/jobs.ts checks it at submission),
    // not a fixed list. SQLite cannot drop a CHECK in place: the jobs table is rebuilt, inside this
    // migration's transaction, with every index it had (nothing references it, and it has no trigger).
    sql: `
CREATE TABLE jobs_v17 (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('queued', 'in_progress', 'completed', 'incomplete', 'failed', 'cancelled')),
  payload TEXT,
  result TEXT,
  reservation_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  lease_owner TEXT,
  lease_until INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0,
  dispatched_at INTEGER,
  cost INTEGER CHECK (cost >= 0),
  announced_at INTEGER,
  checkpoint TEXT,
  next_attempt_at INTEGER
) STRICT;
INSERT INTO jobs_v17 (id, kind, owner_kind, owner_id, key_id, status, payload, result, reservation_id, created_at, updated_at, expires_at,
  lease_owner, lease_until, attempts, dispatched_at, cost, announced_at, checkpoint, next_attempt_at)
SELECT id, kind, owner_kind, owner_id, key_id, status, payload, result, reservation_id, created_at, updated_at, expires_at,
  lease_owner, lease_until, attempts, dispatched_at, cost, announced_at, checkpoint, next_attempt_at FROM jobs;
DROP TABLE jobs;
ALTER TABLE jobs_v17 RENAME TO jobs;
CREATE INDEX jobs_expiry ON jobs (expires_at);
CREATE INDEX jobs_unannounced ON jobs (updated_at) WHERE announced_at IS NULL AND status IN ('completed', 'incomplete', 'failed', 'cancelled');
CREATE INDEX jobs_queued ON jobs (kind, created_at) WHERE status = 'queued';
CREATE INDEX jobs_in_flight ON jobs (kind, next_attempt_at) WHERE status = 'in_progress';
CREATE INDEX jobs_leased ON jobs (kind, owner_kind, owner_id) WHERE lease_owner IS NOT NULL;
CREATE INDEX jobs_owner_time ON jobs (owner_kind, owner_id, created_at, id);
CREATE INDEX jobs_time ON jobs (created_at, id);
`,
  },
  {
    version: 18,
    name: 'the canonical request kept with the stored output',
    // JSON text, never queried: shown on the dashboard's request page (docs/dashboard.md).
    sql: `
ALTER TABLE request_log ADD COLUMN canonical_request TEXT;
`,
  },
  {
    version: 19,
    name: 'the request log by key',
    // The dashboard's request log filtered by key pages through that key's rows in time order rather
    // than reading every row of the period (docs/performance.md, "Usage analytics and the request log").
    sql: `
CREATE INDEX request_log_key_time ON request_log (key_id, created_at, id);
`,
  },
  {
    version: 20,
    name: 'credit leases',
    // The columns of PostgreSQL's credit leases (postgres/wallet-leases.ts), unused here: the one
    // server of a file holds its wallets in memory whole (sqlite/wallet-book.ts). Kept so that the two
    // schemas stay parallel.
    sql: `
ALTER TABLE reservations ADD COLUMN lease INTEGER NOT NULL DEFAULT 0 CHECK (lease IN (0, 1));
ALTER TABLE wallets ADD COLUMN lease_recall_until INTEGER NOT NULL DEFAULT 0;
`,
  },
  {
    version: 21,
    name: 'queued jobs by owner',
    // A claim reads the oldest queued jobs of each owner (a skip over this index: one probe per owner)
    // instead of sorting every queued job of the kind: its cost follows the owners waiting, not the
    // backlog (docs/jobs.md, "Fairness"). It replaces jobs_queued, which only that sort read.
    sql: `
DROP INDEX jobs_queued;
CREATE INDEX jobs_queued_by_owner ON jobs (kind, owner_kind, owner_id, created_at, id) WHERE status = 'queued';
`,
  },
  {
    version: 22,
    name: 'waiting jobs',
    // The backlog's count (JobStore.countWaitingJobs: the gauges of /metrics and the health page)
    // reads the waiting jobs through this index instead of the whole table, which holds every job
    // ended in the last 24 hours: at 100 jobs a second, millions of rows read at every scrape
    // (docs/performance.md, "Background jobs on PostgreSQL").
    sql: `
CREATE INDEX jobs_waiting ON jobs (kind, status, next_attempt_at, expires_at) WHERE status IN ('queued', 'in_progress');
`,
  },
  {
    version: 23,
    name: 'usage rollups summed by batch',
    // The request log's writer now adds each batch's sums into the rollups itself, one upsert per
    // rollup row (sqlite/rollups.ts): the trigger of migration 14 added every request twice, at
    // about the cost of writing its row (docs/performance.md, "A savepoint journal, the usage
    // rollups and the tokenizer's table").
    sql: `
DROP TRIGGER request_log_usage_rollups;
`,
  },
  {
    version: 24,
    name: 'instance sessions',
    // Nothing to change: one SQLite file has one server, which needs no heartbeat (PostgreSQL's
    // instances record the session they beat over).
    sql: '',
  },
];
