/**
 * The PostgreSQL schema, version by version. Kept line-for-line parallel to sqlite.ts: the same
 * tables, columns, constraints and indexes, in each engine's own types (money and times BIGINT,
 * booleans BOOLEAN, JSON documents JSON or JSONB).
 */
import type { Migration } from './migration.ts';

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  community_supply BOOLEAN NOT NULL DEFAULT false,
  training_use BOOLEAN NOT NULL DEFAULT false,
  rate_numerator BIGINT CHECK (rate_numerator >= 0),
  rate_denominator BIGINT CHECK (rate_denominator > 0),
  created_at BIGINT NOT NULL,
  CHECK ((rate_numerator IS NULL) = (rate_denominator IS NULL))
);

CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  organization_id TEXT REFERENCES organizations (id),
  community_supply BOOLEAN NOT NULL DEFAULT false,
  training_use BOOLEAN NOT NULL DEFAULT false,
  rate_numerator BIGINT CHECK (rate_numerator >= 0),
  rate_denominator BIGINT CHECK (rate_denominator > 0),
  created_at BIGINT NOT NULL,
  CHECK ((rate_numerator IS NULL) = (rate_denominator IS NULL))
);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT NOT NULL,
  name TEXT,
  hash TEXT NOT NULL,
  display_prefix TEXT NOT NULL,
  scopes JSON,
  allowed_models JSON,
  limits JSON,
  created_at BIGINT NOT NULL,
  revoked_at BIGINT
);
CREATE UNIQUE INDEX api_keys_hash ON api_keys (hash);
CREATE INDEX api_keys_owner ON api_keys (owner_kind, owner_id);

-- One row per owner: the running totals the ledger and the open reservations add up to. The
-- CHECKs make "available never negative" a property of the data, not only of the code.
CREATE TABLE wallets (
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT NOT NULL,
  balance BIGINT NOT NULL DEFAULT 0 CHECK (balance >= 0),
  reserved BIGINT NOT NULL DEFAULT 0 CHECK (reserved >= 0 AND reserved <= balance),
  PRIMARY KEY (owner_kind, owner_id)
);

CREATE TABLE ledger_entries (
  id TEXT PRIMARY KEY,
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('credit', 'charge')),
  amount BIGINT NOT NULL CHECK (amount > 0),
  reservation_id TEXT,
  request_id TEXT,
  note TEXT,
  created_at BIGINT NOT NULL
);
CREATE INDEX ledger_entries_owner ON ledger_entries (owner_kind, owner_id, id);

CREATE TABLE reservations (
  id TEXT PRIMARY KEY,
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT NOT NULL,
  amount BIGINT NOT NULL CHECK (amount >= 0),
  request_id TEXT,
  status TEXT NOT NULL CHECK (status IN ('open', 'settled', 'released')),
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  closed_at BIGINT
);
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
  stream BOOLEAN NOT NULL,
  input_tokens INTEGER NOT NULL,
  cache_read_tokens INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL,
  search_units INTEGER NOT NULL,
  cost BIGINT NOT NULL,
  error_code TEXT,
  created_at BIGINT NOT NULL,
  duration_ms INTEGER NOT NULL,
  first_byte_ms INTEGER,
  -- JSON, not JSONB: the output is kept as the exact text the client received.
  output JSON,
  blob_keys JSON NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX request_log_owner_time ON request_log (owner_kind, owner_id, created_at);
CREATE INDEX request_log_expiry ON request_log (expires_at);

CREATE TABLE idempotency_records (
  key_id TEXT NOT NULL,
  route TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  body_hash TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('in_progress', 'completed')),
  locked_until BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  response_status INTEGER,
  response_headers JSON,
  response_body TEXT,
  PRIMARY KEY (key_id, route, idempotency_key)
);
CREATE INDEX idempotency_records_expiry ON idempotency_records (expires_at);

CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('response', 'video')),
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('queued', 'in_progress', 'completed', 'incomplete', 'failed', 'cancelled')),
  payload JSONB,
  result JSONB,
  reservation_id TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  lease_owner TEXT,
  lease_until BIGINT,
  attempts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_claimable ON jobs (kind, created_at) WHERE status IN ('queued', 'in_progress');
CREATE INDEX jobs_expiry ON jobs (expires_at);

CREATE TABLE change_feed (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  version BIGINT NOT NULL
);
INSERT INTO change_feed (id, version) VALUES (1, 0);
`,
  },
  {
    version: 2,
    name: 'reservation holders',
    // Who holds each open reservation, and each instance's heartbeat on the database's clock, so that
    // a live instance releases the holds of one whose heartbeat lapsed (docs/billing.md). NULL for
    // the rows of earlier versions. SQLite has the holder columns only (one server per file).
    sql: `
ALTER TABLE reservations
  ADD COLUMN holder_kind TEXT CHECK (holder_kind IN ('instance')),
  ADD COLUMN holder_id TEXT,
  ADD CHECK ((holder_kind IS NULL) = (holder_id IS NULL));
CREATE INDEX reservations_open_holder ON reservations (holder_kind, holder_id) WHERE status = 'open';

CREATE TABLE instances (
  id TEXT PRIMARY KEY,
  started_at BIGINT NOT NULL,
  heartbeat_at BIGINT NOT NULL
);
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
);
`,
  },
  {
    version: 4,
    name: 'one-hour cache writes',
    // The part of cache_write_tokens written with a 1-hour lifetime, billed at its own rate
    // (docs/billing.md). NULL when the provider reported no split, and for the rows of earlier versions.
    sql: `
ALTER TABLE request_log
  ADD COLUMN cache_write_1h_tokens INTEGER CHECK (cache_write_1h_tokens BETWEEN 0 AND cache_write_tokens);
`,
  },
  {
    version: 5,
    name: 'job holds',
    // Background jobs hold credit in their own name (holder kind 'job'), so that no instance's end
    // releases a job's hold (docs/jobs.md); a job records when its work was first sent upstream and
    // the cost it is to be charged. Its documents become JSON (kept as text) rather than JSONB, which
    // refuses text a client may send (NUL characters, lone surrogates).
    sql: `
ALTER TABLE reservations
  DROP CONSTRAINT reservations_holder_kind_check,
  ADD CONSTRAINT reservations_holder_kind_check CHECK (holder_kind IN ('instance', 'job'));
ALTER TABLE jobs
  ALTER COLUMN payload TYPE JSON USING payload::json,
  ALTER COLUMN result TYPE JSON USING result::json,
  ADD COLUMN dispatched_at BIGINT,
  ADD COLUMN cost BIGINT CHECK (cost >= 0);
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
ALTER TABLE jobs ADD COLUMN announced_at BIGINT;
UPDATE jobs SET announced_at = updated_at WHERE status IN ('completed', 'incomplete', 'failed', 'cancelled');
CREATE INDEX jobs_unannounced ON jobs (updated_at) WHERE announced_at IS NULL AND status IN ('completed', 'incomplete', 'failed', 'cancelled');

CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('account', 'organization')),
  owner_id TEXT NOT NULL,
  url TEXT NOT NULL,
  secret TEXT NOT NULL,
  event_types JSONB,
  created_at BIGINT NOT NULL
);
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
  next_attempt_at BIGINT NOT NULL,
  lease_owner TEXT,
  lease_until BIGINT,
  last_status INTEGER,
  last_error TEXT,
  created_at BIGINT NOT NULL,
  give_up_at BIGINT NOT NULL,
  finished_at BIGINT,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (endpoint_id, event_id)
);
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
ALTER TABLE organizations ADD COLUMN limits JSON;
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
    // Stored outputs in the database itself (postgres/blobs.ts), so that any instance serves any
    // output with no shared folder: a blob row (its key NULL while its chunks are written) and its
    // bytes in chunk rows, deleted with it. The key's "C" collation makes a prefix a range of its index.
    sql: `
CREATE TABLE blobs (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  key TEXT COLLATE "C" UNIQUE,
  content_type TEXT NOT NULL,
  size BIGINT NOT NULL CHECK (size >= 0),
  created_at BIGINT NOT NULL
);
CREATE INDEX blobs_created ON blobs (created_at);
CREATE TABLE blob_chunks (
  blob_id BIGINT NOT NULL REFERENCES blobs (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL CHECK (seq >= 0),
  data BYTEA NOT NULL,
  PRIMARY KEY (blob_id, seq)
);
`,
  },
  {
    version: 9,
    name: 'job checkpoints',
    // What a job's worker recorded of work that outlives it upstream (a video generation's operation),
    // so that a worker taking the job over goes on with it instead of starting it again (src/jobs/).
    sql: `
ALTER TABLE jobs ADD COLUMN checkpoint JSON;
`,
  },
  {
    version: 10,
    name: 'wallet group commits',
    // One call applies everything an instance has pending for one wallet (postgres/wallet-commits.ts,
    // docs/billing.md "One busy wallet"): the closings (settle, or release when the cost is NULL),
    // then the holds, each decided in turn against the wallet as it stands, with one UPDATE of the
    // wallet row. Locks are taken in the order every other statement of the ledger takes them:
    // reservation rows (by id), then the wallet row. It returns one row per closing that found its
    // reservation open (id, its amount, the charge) and one per hold granted (id, amount, NULL).
    sql: `
CREATE FUNCTION gateway_wallet_commit(
  p_owner_kind TEXT, p_owner_id TEXT, p_now BIGINT,
  c_ids TEXT[], c_costs BIGINT[], c_request_ids TEXT[], c_entry_ids TEXT[],
  h_ids TEXT[], h_amounts BIGINT[], h_request_ids TEXT[], h_holder_kinds TEXT[], h_holder_ids TEXT[],
  h_created_at BIGINT[], h_expires_at BIGINT[], h_key_ids TEXT[]
) RETURNS TABLE (id TEXT, amount BIGINT, charged BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
  v_balance BIGINT;
  v_reserved BIGINT;
  v_start_balance BIGINT;
  v_start_reserved BIGINT;
  closed_ids TEXT[];
  closed_amounts BIGINT[];
  closed_costs BIGINT[];
  closed_request_ids TEXT[];
  closed_key_ids TEXT[];
  closed_entry_ids TEXT[];
  charges BIGINT[] := '{}';
  granted INT[] := '{}';
  v_charge BIGINT;
BEGIN
  WITH wanted AS (
    SELECT * FROM unnest(c_ids, c_costs, c_request_ids, c_entry_ids) AS c (id, cost, request_id, entry_id)
  ), locked AS (
    SELECT r.id FROM reservations r JOIN wanted w ON r.id = w.id
    WHERE r.status = 'open' AND r.owner_kind = p_owner_kind AND r.owner_id = p_owner_id
    ORDER BY r.id FOR UPDATE OF r
  ), closed AS (
    UPDATE reservations r
    SET status = CASE WHEN w.cost IS NULL THEN 'released' ELSE 'settled' END, closed_at = p_now
    FROM wanted w
    WHERE r.id = w.id AND r.id IN (SELECT l.id FROM locked l) AND r.status = 'open'
    RETURNING r.id, r.amount, w.cost, COALESCE(w.request_id, r.request_id) AS request_id, r.key_id, w.entry_id
  )
  SELECT array_agg(closed.id), array_agg(closed.amount), array_agg(closed.cost), array_agg(closed.request_id),
         array_agg(closed.key_id), array_agg(closed.entry_id)
  INTO closed_ids, closed_amounts, closed_costs, closed_request_ids, closed_key_ids, closed_entry_ids
  FROM closed;

  SELECT w.balance, w.reserved INTO v_balance, v_reserved
  FROM wallets w WHERE w.owner_kind = p_owner_kind AND w.owner_id = p_owner_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  v_start_balance := v_balance;
  v_start_reserved := v_reserved;

  -- A charge is capped at what its hold plus the free balance cover, as in a single settlement.
  FOR i IN 1 .. coalesce(array_length(closed_ids, 1), 0) LOOP
    v_charge := CASE WHEN closed_costs[i] IS NULL THEN 0
                     ELSE LEAST(closed_costs[i], v_balance - v_reserved + closed_amounts[i]) END;
    v_balance := v_balance - v_charge;
    v_reserved := v_reserved - closed_amounts[i];
    charges := charges || v_charge;
    id := closed_ids[i];
    amount := closed_amounts[i];
    charged := v_charge;
    RETURN NEXT;
  END LOOP;

  INSERT INTO ledger_entries (id, owner_kind, owner_id, kind, amount, reservation_id, request_id, created_at, key_id)
  SELECT e.entry_id, p_owner_kind, p_owner_id, 'charge', e.charge, e.reservation_id, e.request_id, p_now, e.key_id
  FROM unnest(closed_entry_ids, charges, closed_ids, closed_request_ids, closed_key_ids)
       AS e (entry_id, charge, reservation_id, request_id, key_id)
  WHERE e.charge > 0;

  -- Each hold is decided in turn, exactly as if it had come alone.
  FOR i IN 1 .. coalesce(array_length(h_ids, 1), 0) LOOP
    IF v_balance - v_reserved >= h_amounts[i] THEN
      v_reserved := v_reserved + h_amounts[i];
      granted := granted || i;
      id := h_ids[i];
      amount := h_amounts[i];
      charged := NULL;
      RETURN NEXT;
    END IF;
  END LOOP;

  INSERT INTO reservations (id, owner_kind, owner_id, amount, request_id, status, holder_kind, holder_id, created_at, expires_at, key_id)
  SELECT h.id, p_owner_kind, p_owner_id, h.amount, h.request_id, 'open', h.holder_kind, h.holder_id, h.created_at, h.expires_at, h.key_id
  FROM unnest(h_ids, h_amounts, h_request_ids, h_holder_kinds, h_holder_ids, h_created_at, h_expires_at, h_key_ids)
       WITH ORDINALITY AS h (id, amount, request_id, holder_kind, holder_id, created_at, expires_at, key_id, n)
  WHERE h.n = ANY (granted);

  IF v_balance <> v_start_balance OR v_reserved <> v_start_reserved THEN
    UPDATE wallets w SET balance = v_balance, reserved = v_reserved
    WHERE w.owner_kind = p_owner_kind AND w.owner_id = p_owner_id;
  END IF;
END;
$$;
`,
  },
  {
    version: 11,
    name: 'request cost beyond the hold',
    // What an upstream reported beyond the request's hold (it ignored max_tokens, or counted the
    // prompt differently): priced, recorded, never charged (docs/billing.md, "Money caps").
    sql: `
ALTER TABLE request_log ADD COLUMN over_hold BIGINT NOT NULL DEFAULT 0 CHECK (over_hold >= 0);
`,
  },
  {
    version: 12,
    name: 'dashboard people and audit',
    // The dashboard's people (src/storage/people.ts): users with a role, sessions (only the hash of
    // the cookie), the single-use tokens of invitations and sign-in links (only their hashes), and
    // the audit log: one hash-chained row per change, which triggers keep append-only.
    // `changes` is TEXT, not JSONB: the hash covers its exact text.
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
  created_at BIGINT NOT NULL,
  last_sign_in_at BIGINT,
  CHECK ((role = 'member') = (owner_kind IS NOT NULL) AND (owner_kind IS NULL) = (owner_id IS NULL))
);
CREATE INDEX users_owner ON users (owner_kind, owner_id, id);
-- The dashboard pages an organization's accounts.
CREATE INDEX accounts_organization ON accounts (organization_id, id);

CREATE TABLE sessions (
  id_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  csrf_token TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  last_seen_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
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
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT
);
CREATE INDEX user_tokens_open ON user_tokens (purpose, id) WHERE used_at IS NULL;

CREATE TABLE audit_log (
  seq BIGINT PRIMARY KEY,
  at BIGINT NOT NULL,
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
);
CREATE INDEX audit_log_action_source ON audit_log (action, source, at);
CREATE INDEX audit_log_action_target ON audit_log (action, target_id, at);
CREATE INDEX audit_log_target ON audit_log (target_id, seq);
CREATE INDEX audit_log_actor ON audit_log (actor_label, seq);
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the audit log is append-only';
END;
$$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
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
    // Usage per hour and per day, added to by the request log's batch insert in the same statement
    // (request-log.ts, usage-rollups.ts). '' stands for none in a key column.
    sql: `
ALTER TABLE request_log ADD COLUMN images INTEGER NOT NULL DEFAULT 0 CHECK (images >= 0);
ALTER TABLE request_log ADD COLUMN video_seconds INTEGER NOT NULL DEFAULT 0 CHECK (video_seconds >= 0);
ALTER TABLE request_log ADD COLUMN cache_savings BIGINT NOT NULL DEFAULT 0 CHECK (cache_savings >= 0);

CREATE TABLE usage_hourly (
  period BIGINT NOT NULL,
  owner_kind TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  organization_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  provider TEXT NOT NULL,
  route TEXT NOT NULL,
  status TEXT NOT NULL,
  requests BIGINT NOT NULL,
  input_tokens BIGINT NOT NULL,
  output_tokens BIGINT NOT NULL,
  cache_read_tokens BIGINT NOT NULL,
  cache_write_tokens BIGINT NOT NULL,
  reasoning_tokens BIGINT NOT NULL,
  images INTEGER NOT NULL,
  video_seconds INTEGER NOT NULL,
  search_units INTEGER NOT NULL,
  cost BIGINT NOT NULL,
  cache_savings BIGINT NOT NULL,
  PRIMARY KEY (period, owner_kind, owner_id, key_id, model, provider, route, status)
);
CREATE INDEX usage_hourly_owner ON usage_hourly (owner_kind, owner_id, period);
CREATE INDEX usage_hourly_organization ON usage_hourly (organization_id, period);
CREATE INDEX usage_hourly_key ON usage_hourly (key_id, period);

CREATE TABLE usage_daily (
  period BIGINT NOT NULL,
  owner_kind TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  organization_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  provider TEXT NOT NULL,
  route TEXT NOT NULL,
  status TEXT NOT NULL,
  requests BIGINT NOT NULL,
  input_tokens BIGINT NOT NULL,
  output_tokens BIGINT NOT NULL,
  cache_read_tokens BIGINT NOT NULL,
  cache_write_tokens BIGINT NOT NULL,
  reasoning_tokens BIGINT NOT NULL,
  images INTEGER NOT NULL,
  video_seconds INTEGER NOT NULL,
  search_units INTEGER NOT NULL,
  cost BIGINT NOT NULL,
  cache_savings BIGINT NOT NULL,
  PRIMARY KEY (period, owner_kind, owner_id, key_id, model, provider, route, status)
);
CREATE INDEX usage_daily_owner ON usage_daily (owner_kind, owner_id, period);
CREATE INDEX usage_daily_organization ON usage_daily (organization_id, period);
CREATE INDEX usage_daily_key ON usage_daily (key_id, period);
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
ALTER TABLE jobs ADD COLUMN next_attempt_at BIGINT;
CREATE TABLE job_turns (
  kind TEXT NOT NULL,
  owner_kind TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  claimed_at BIGINT NOT NULL,
  PRIMARY KEY (kind, owner_kind, owner_id)
);
CREATE INDEX jobs_queued ON jobs (kind, created_at) WHERE status = 'queued';
CREATE INDEX jobs_in_flight ON jobs (kind, next_attempt_at) WHERE status = 'in_progress';
CREATE INDEX jobs_leased ON jobs (kind, owner_kind, owner_id) WHERE lease_owner IS NOT NULL;
DROP INDEX jobs_claimable;
`,
  },
  {
    version: 16,
    name: 'request attempts and the dashboard views',
    // Each request's upstream attempts as JSON text (the dashboard's waterfall), the indexes the
    // dashboard's request log, hold lookup and job lists page through, and what each instance
    // reports of itself with its heartbeat (docs/dashboard.md).
    sql: `
ALTER TABLE request_log ADD COLUMN attempts TEXT;
CREATE INDEX request_log_time ON request_log (created_at, id);
CREATE INDEX reservations_request ON reservations (request_id) WHERE request_id IS NOT NULL;
CREATE INDEX ledger_entries_reservation ON ledger_entries (reservation_id) WHERE reservation_id IS NOT NULL;
CREATE INDEX jobs_owner_time ON jobs (owner_kind, owner_id, created_at, id);
CREATE INDEX jobs_time ON jobs (created_at, id);
ALTER TABLE instances ADD COLUMN vitals TEXT;
`,
  },
  {
    version: 17,
    name: 'open job kinds',
    // A job's kind is any kind a handler is registered for (src/jobs/jobs.ts checks it at submission),
    // not a fixed list.
    sql: `
ALTER TABLE jobs DROP CONSTRAINT jobs_kind_check;
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
    // A busy wallet's slice of credit held by one instance (postgres/wallet-leases.ts, docs/billing.md
    // "Credit leases"): a reservation row marked `lease`, held by its instance like any other hold (so
    // the release of a lapsed instance's holds returns it), whose amount follows the slice. A wallet
    // records until when its slices are recalled (on the database's clock): a hold the wallet refused
    // while slices were out. `gateway_wallet_lease_commit` is the group commit (migration 10) plus what
    // an instance decided against its slice (those reservations in their final state and their
    // charges) and the slice's growth, shrinking or return, in the same transaction.
    sql: `
ALTER TABLE reservations ADD COLUMN lease BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX reservations_open_lease ON reservations (owner_kind, owner_id) WHERE status = 'open' AND lease;
ALTER TABLE wallets ADD COLUMN lease_recall_until BIGINT NOT NULL DEFAULT 0;

-- Returns the rows of gateway_wallet_commit as parts 'closing' (charged set) and 'hold' (charged
-- NULL); one 'slice' row per hold decided against the slice and written now (its amount and charge;
-- none when the slice was gone); and always one 'lease' row: the slice's amount after the commit
-- (NULL: the instance holds none, or it was released under it), what its holds were charged,
-- whether slices are recalled, and, when a hold was refused, whether slices of the wallet are out.
CREATE FUNCTION gateway_wallet_lease_commit(
  p_owner_kind TEXT, p_owner_id TEXT, p_now BIGINT,
  c_ids TEXT[], c_costs BIGINT[], c_request_ids TEXT[], c_entry_ids TEXT[],
  h_ids TEXT[], h_amounts BIGINT[], h_request_ids TEXT[], h_holder_kinds TEXT[], h_holder_ids TEXT[],
  h_created_at BIGINT[], h_expires_at BIGINT[], h_key_ids TEXT[],
  l_id TEXT, l_new BOOLEAN, l_holder_id TEXT, l_change BIGINT, l_close BOOLEAN, l_expires_at BIGINT, l_share INT, l_recall_ms BIGINT,
  s_ids TEXT[], s_amounts BIGINT[], s_costs BIGINT[], s_request_ids TEXT[], s_entry_ids TEXT[], s_key_ids TEXT[],
  s_created_at BIGINT[], s_expires_at BIGINT[], s_closed_at BIGINT[]
) RETURNS TABLE (part TEXT, id TEXT, amount BIGINT, charged BIGINT, recalled BOOLEAN, leased BOOLEAN)
LANGUAGE plpgsql AS $$
DECLARE
  v_db_now BIGINT := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  v_lease BIGINT;
  v_taken BIGINT := 0;
  v_given BIGINT;
  v_free BIGINT;
  v_recall_until BIGINT;
  v_refused BOOLEAN;
  v_leased BOOLEAN;
  v_costs BIGINT[] := '{}';
BEGIN
  -- The slice's row first: reservation rows before the wallet row, the order every statement of
  -- the ledger takes its locks in. Released under the instance (judged lapsed, or expired), it is
  -- gone, and so is everything decided against it.
  SELECT r.amount INTO v_lease FROM reservations r
  WHERE r.id = l_id AND r.status = 'open' AND r.lease AND r.holder_kind = 'instance' AND r.holder_id = l_holder_id
    AND r.owner_kind = p_owner_kind AND r.owner_id = p_owner_id
  FOR UPDATE;

  -- A busy wallet's commit often carries its slice alone: the group commit then has nothing to do.
  IF coalesce(array_length(c_ids, 1), 0) > 0 OR coalesce(array_length(h_ids, 1), 0) > 0 THEN
    RETURN QUERY
      SELECT CASE WHEN c.charged IS NULL THEN 'hold' ELSE 'closing' END, c.id, c.amount, c.charged, NULL::boolean, NULL::boolean
      FROM gateway_wallet_commit(p_owner_kind, p_owner_id, p_now, c_ids, c_costs, c_request_ids, c_entry_ids,
                                 h_ids, h_amounts, h_request_ids, h_holder_kinds, h_holder_ids, h_created_at, h_expires_at, h_key_ids) AS c;
    -- A hold granted is a row now: fewer rows than holds asked is a refusal.
    v_refused := coalesce(array_length(h_ids, 1), 0) > (SELECT count(*) FROM reservations r WHERE r.id = ANY (h_ids));
  END IF;

  -- The wallet row is locked by this transaction already (or there is no wallet).
  SELECT w.balance - w.reserved, w.lease_recall_until INTO v_free, v_recall_until
  FROM wallets w WHERE w.owner_kind = p_owner_kind AND w.owner_id = p_owner_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;

  -- The holds decided against the slice: each charge is paid out of the slice, so it moves from
  -- reserved to spent and the slice shrinks by it. The instance never lets its holds pass its
  -- slice; should the slice be smaller than it believes (a database crash lost the commit that grew
  -- it), a charge is capped at what is left of the slice, as a settlement is at the free balance.
  IF v_lease IS NOT NULL THEN
    FOR i IN 1 .. coalesce(array_length(s_ids, 1), 0) LOOP
      v_costs := v_costs || CASE WHEN s_costs[i] IS NULL THEN 0::bigint ELSE LEAST(s_costs[i], s_amounts[i], v_lease - v_taken) END;
      v_taken := v_taken + v_costs[i];
      RETURN QUERY SELECT 'slice'::text, s_ids[i], s_amounts[i], v_costs[i], NULL::boolean, NULL::boolean;
    END LOOP;
    v_lease := v_lease - v_taken;
    INSERT INTO reservations (id, owner_kind, owner_id, amount, request_id, status, holder_kind, holder_id, created_at, expires_at, closed_at, key_id)
    SELECT s.id, p_owner_kind, p_owner_id, s.amount, s.request_id, CASE WHEN s.cost IS NULL THEN 'released' ELSE 'settled' END,
           'instance', l_holder_id, s.created_at, s.expires_at, s.closed_at, s.key_id
    FROM unnest(s_ids, s_amounts, s_costs, s_request_ids, s_key_ids, s_created_at, s_expires_at, s_closed_at)
         AS s (id, amount, cost, request_id, key_id, created_at, expires_at, closed_at);
    INSERT INTO ledger_entries (id, owner_kind, owner_id, kind, amount, reservation_id, request_id, created_at, key_id)
    SELECT e.entry_id, p_owner_kind, p_owner_id, 'charge', e.charge, e.reservation_id, e.request_id, e.closed_at, e.key_id
    FROM unnest(s_entry_ids, v_costs, s_ids, s_request_ids, s_key_ids, s_closed_at)
         AS e (entry_id, charge, reservation_id, request_id, key_id, closed_at)
    WHERE e.charge > 0;
  END IF;

  -- The slice grows, shrinks or goes. It grows only in full, only while no recall is in force, and
  -- only to at most 1/l_share of what the wallet has available beside the other holds and slices.
  v_given := 0;
  IF l_id IS NOT NULL AND (v_lease IS NOT NULL OR l_new) THEN
    v_lease := coalesce(v_lease, 0);
    IF l_change < 0 THEN
      v_given := -LEAST(-l_change, v_lease);
    ELSIF l_change > 0 AND v_db_now >= v_recall_until AND l_change <= v_free
          AND (v_lease + l_change) * l_share <= v_free + v_lease THEN
      v_given := l_change;
    END IF;
    v_lease := v_lease + v_given;
    IF l_new THEN
      IF v_lease > 0 THEN
        INSERT INTO reservations (id, owner_kind, owner_id, amount, request_id, status, holder_kind, holder_id, created_at, expires_at, key_id, lease)
        VALUES (l_id, p_owner_kind, p_owner_id, v_lease, NULL, 'open', 'instance', l_holder_id, p_now, l_expires_at, NULL, true);
      ELSE
        v_lease := NULL;
      END IF;
    ELSIF l_close AND v_lease = 0 THEN
      UPDATE reservations r SET amount = 0, status = 'released', closed_at = p_now WHERE r.id = l_id;
      v_lease := NULL;
    ELSE
      UPDATE reservations r SET amount = v_lease, expires_at = GREATEST(r.expires_at, l_expires_at) WHERE r.id = l_id;
    END IF;
  END IF;

  -- A hold refused while slices of the wallet are out recalls them: their instances give back what
  -- they do not use, and none grows, until the recall lapses.
  IF v_refused THEN
    v_leased := EXISTS (
      SELECT 1 FROM reservations r WHERE r.owner_kind = p_owner_kind AND r.owner_id = p_owner_id AND r.status = 'open' AND r.lease
    );
    IF v_leased THEN
      v_recall_until := GREATEST(v_recall_until, v_db_now + l_recall_ms);
    END IF;
  END IF;

  IF v_taken <> 0 OR v_given <> 0 OR v_leased THEN
    UPDATE wallets w SET balance = w.balance - v_taken, reserved = w.reserved - v_taken + v_given, lease_recall_until = v_recall_until
    WHERE w.owner_kind = p_owner_kind AND w.owner_id = p_owner_id;
  END IF;

  RETURN QUERY SELECT 'lease'::text, l_id, v_lease, v_taken, v_db_now < v_recall_until, v_leased;
END;
$$;
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
    // Nothing to change: the batch insert has always summed its rows into the rollups
    // (request-log.ts). SQLite's trigger is replaced by the same in this version.
    sql: '',
  },
  {
    version: 24,
    name: 'instance sessions',
    // The database session an instance beats over (postgres/instances.ts): while it is open, the
    // instance is alive however late its beats come, up to a backstop; a process killed closes it.
    sql: `
ALTER TABLE instances ADD COLUMN session_pid INTEGER;
ALTER TABLE instances ADD COLUMN session_start TIMESTAMPTZ;
`,
  },
];
