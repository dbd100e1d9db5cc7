/**
 * The SQL of the dashboard's views (dashboard-views.ts), written once for both engines: a query is
 * text with numbered placeholders (`$1` on PostgreSQL, `?1` on SQLite) and its values. Only the
 * filters given become predicates, so each combination is planned for what it asks.
 */
import { bigintValue, type Row } from './rows.ts';
import type { EndpointFigures, JobFilter, JobLine, OperationsCounts, Percentiles, RequestFilter, RequestLine, WalletCheck } from './dashboard-views.ts';
import { JOB_STATES } from './dashboard-views.ts';
import type { PageRequest } from './people.ts';
import type { JobRecord, OwnerKind, OwnerRef, RequestStatus, UpstreamAttempt } from './store.ts';

export interface Query {
  readonly text: string;
  readonly values: readonly unknown[];
}

export type Placeholder = (position: number) => string;

const REQUEST_LINE_COLUMNS =
  'id, owner_kind, owner_id, key_id, route, model, provider, status, http_status, input_tokens, output_tokens, cost, error_code, created_at, duration_ms';
const JOB_LINE_COLUMNS = 'id, kind, owner_kind, owner_id, key_id, status, reservation_id, created_at, updated_at, attempts, cost';

/** A keyset cursor of (created_at, id) pages, newest first. */
function cursorOf(after: string | null | undefined): { createdAt: number; id: string } | null {
  if (!after) return null;
  const match = /^(\d{1,15})~(.{1,200})$/.exec(after);
  return match ? { createdAt: Number(match[1]), id: match[2]! } : null;
}

export function timeCursor(row: Row): string {
  return `${Number(bigintValue(row.created_at))}~${String(row.id)}`;
}

class Predicates {
  readonly #placeholder: Placeholder;
  readonly #clauses: string[] = [];
  readonly values: unknown[] = [];

  constructor(placeholder: Placeholder) {
    this.#placeholder = placeholder;
  }

  /** Adds `sql` with each `?` bound to the next value, when the first value is given (or `sql` alone, when it has none). */
  add(sql: string, ...values: unknown[]): void {
    if (sql === '' || (values.length > 0 && (values[0] === undefined || values[0] === ''))) return;
    let index = 0;
    this.#clauses.push(sql.replace(/\?/g, () => this.bind(values[index++])));
  }

  bind(value: unknown): string {
    this.values.push(value);
    return this.#placeholder(this.values.length);
  }

  where(): string {
    return this.#clauses.length === 0 ? '' : `WHERE ${this.#clauses.join(' AND ')}`;
  }

  /** Rows of `owner`; of an organization, its accounts' too (as its members see them everywhere else). */
  owner(owner: OwnerRef | undefined): void {
    if (owner?.kind === 'organization') {
      this.add(
        "(owner_kind = 'organization' AND owner_id = ? OR owner_kind = 'account' AND owner_id IN (SELECT id FROM accounts WHERE organization_id = ?))",
        owner.id,
        owner.id,
      );
    } else {
      this.add('owner_kind = ? AND owner_id = ?', owner?.kind, owner?.id);
    }
  }
}

/**
 * `guard`: a predicate every statement carries (SQLite's per-statement time limit, which is checked
 * per row read: sqlite/dashboard-reader.ts); none on PostgreSQL, whose pool sets the limit.
 */
export function requestPageQuery(filter: RequestFilter, page: PageRequest, placeholder: Placeholder, guard?: string): Query {
  const predicates = new Predicates(placeholder);
  predicates.add(guard ?? '');
  predicates.owner(filter.owner);
  predicates.add('id = ?', filter.requestId);
  predicates.add('created_at >= ?', filter.from);
  predicates.add('created_at < ?', filter.to);
  predicates.add('key_id = ?', filter.keyId);
  predicates.add('model = ?', filter.model);
  predicates.add('status = ?', filter.status);
  predicates.add('route = ?', filter.route);
  predicates.add('provider = ?', filter.provider);
  predicates.add('cost >= ?', filter.minCost);
  predicates.add('cost <= ?', filter.maxCost);
  const cursor = cursorOf(page.after);
  predicates.add('(created_at, id) < (?, ?)', cursor?.createdAt, cursor?.id);
  const limit = predicates.bind(page.limit + 1);
  return {
    text: `SELECT ${REQUEST_LINE_COLUMNS} FROM request_log ${predicates.where()} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
    values: predicates.values,
  };
}

export function jobPageQuery(filter: JobFilter, page: PageRequest, placeholder: Placeholder, guard?: string): Query {
  const predicates = new Predicates(placeholder);
  predicates.add(guard ?? '');
  predicates.owner(filter.owner);
  predicates.add('kind = ?', filter.kind);
  if (filter.state) {
    predicates.add(`status IN (${JOB_STATES[filter.state].map(() => '?').join(', ')})`, ...JOB_STATES[filter.state]);
  }
  const cursor = cursorOf(page.after);
  predicates.add('(created_at, id) < (?, ?)', cursor?.createdAt, cursor?.id);
  const limit = predicates.bind(page.limit + 1);
  return {
    text: `SELECT ${JOB_LINE_COLUMNS} FROM jobs ${predicates.where()} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
    values: predicates.values,
  };
}

const integer = (value: unknown) => Number(bigintValue(value));
const owner = (row: Row) => ({ kind: row.owner_kind as OwnerKind, id: String(row.owner_id) });

export function requestLineFromRow(row: Row): RequestLine {
  return {
    id: String(row.id),
    owner: owner(row),
    keyId: String(row.key_id),
    route: String(row.route),
    model: row.model === null ? null : String(row.model),
    provider: row.provider === null ? null : String(row.provider),
    status: row.status as RequestStatus,
    httpStatus: integer(row.http_status),
    inputTokens: integer(row.input_tokens),
    outputTokens: integer(row.output_tokens),
    cost: bigintValue(row.cost),
    errorCode: row.error_code === null ? null : String(row.error_code),
    createdAt: integer(row.created_at),
    durationMs: integer(row.duration_ms),
  };
}

export function jobLineFromRow(row: Row): JobLine {
  return {
    id: String(row.id),
    kind: row.kind as JobRecord['kind'],
    owner: owner(row),
    keyId: String(row.key_id),
    status: row.status as JobRecord['status'],
    reservationId: row.reservation_id === null ? null : String(row.reservation_id),
    createdAt: integer(row.created_at),
    updatedAt: integer(row.updated_at),
    attempts: integer(row.attempts),
    cost: row.cost === null ? null : bigintValue(row.cost),
  };
}

/**
 * Every wallet with its ledger sums and open holds, in one statement (one snapshot on PostgreSQL;
 * on SQLite, one read of the file after the writes behind it were flushed). `guard` as above.
 */
export const ledgerIntegrityQuery = (guard = 'TRUE') => `
SELECT w.owner_kind, w.owner_id, w.balance, w.reserved,
  COALESCE(e.credits, 0) AS credits, COALESCE(e.charges, 0) AS charges, COALESCE(r.open_holds, 0) AS open_holds
FROM wallets w
LEFT JOIN (
  SELECT owner_kind, owner_id,
    SUM(CASE WHEN kind = 'credit' THEN amount ELSE 0 END) AS credits,
    SUM(CASE WHEN kind = 'charge' THEN amount ELSE 0 END) AS charges
  FROM ledger_entries WHERE ${guard} GROUP BY owner_kind, owner_id
) e ON e.owner_kind = w.owner_kind AND e.owner_id = w.owner_id
LEFT JOIN (
  SELECT owner_kind, owner_id, SUM(amount) AS open_holds FROM reservations WHERE status = 'open' AND ${guard} GROUP BY owner_kind, owner_id
) r ON r.owner_kind = w.owner_kind AND r.owner_id = w.owner_id
WHERE ${guard}`;

export function walletChecks(rows: readonly Row[]): WalletCheck[] {
  const checks = rows.map((row): WalletCheck => {
    const credits = bigintValue(row.credits);
    const charges = bigintValue(row.charges);
    const openHolds = bigintValue(row.open_holds);
    const balance = bigintValue(row.balance);
    const reserved = bigintValue(row.reserved);
    return { owner: owner(row), credits, charges, openHolds, balance, reserved, difference: credits - charges - openHolds - (balance - reserved) };
  });
  const faulty = (check: WalletCheck) => (check.difference !== 0n || check.credits - check.charges !== check.balance ? 0 : 1);
  return checks.sort((a, b) => faulty(a) - faulty(b) || `${a.owner.kind}/${a.owner.id}`.localeCompare(`${b.owner.kind}/${b.owner.id}`));
}

/** Webhook deliveries given up since a time, pending ones that have failed at least once, and the jobs not ended. */
export const operationsCountsQuery = (placeholder: Placeholder) => `
SELECT
  (SELECT count(*) FROM webhook_deliveries WHERE status = 'failed' AND finished_at >= ${placeholder(1)}) AS failed,
  (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending' AND last_error IS NOT NULL) AS retrying,
  (SELECT count(*) FROM jobs WHERE status = 'queued') AS queued,
  (SELECT count(*) FROM jobs WHERE status = 'in_progress') AS running`;

export function operationsCountsFromRow(row: Row): OperationsCounts {
  return {
    failedWebhookDeliveries: integer(row.failed),
    retryingWebhookDeliveries: integer(row.retrying),
    queuedJobs: integer(row.queued),
    runningJobs: integer(row.running),
  };
}

/** The most requests the endpoints' figures are read from: the newest of the window. */
export const ENDPOINT_FIGURES_ROWS = 20_000;

/**
 * The attempts of the newest requests created in [$1, $2), ENDPOINT_FIGURES_ROWS at most: an index
 * range of `request_log (created_at, id)`, with each row's `attempts` JSON text. They are read in
 * JavaScript (endpointFiguresOf) rather than by the engines' JSON functions, because PostgreSQL's
 * refuse any JSON holding \u0000 or an unpaired surrogate, which an upstream's error message may
 * carry; the cap bounds that work however busy the hour was. `guard` as above.
 */
export const recentAttemptsQuery = (placeholder: Placeholder, guard = 'TRUE') =>
  `SELECT attempts FROM request_log WHERE created_at >= ${placeholder(1)} AND created_at < ${placeholder(2)} AND attempts IS NOT NULL AND ${guard} ORDER BY created_at DESC LIMIT ${ENDPOINT_FIGURES_ROWS}`;

/** The nearest-rank percentiles of values sorted ascending: the smallest whose rank reaches p % of the count. */
function percentiles(sorted: readonly number[]): Percentiles | null {
  if (sorted.length === 0) return null;
  const at = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return { p50: at(50), p95: at(95) };
}

/** Each endpoint's calls (skipped attempts made none), failures and percentiles, by endpoint key. */
export function endpointFiguresOf(rows: readonly Row[]): EndpointFigures[] {
  const calls = new Map<string, { attempts: number; failures: number; durations: number[]; firstBytes: number[] }>();
  for (const row of rows) {
    for (const attempt of JSON.parse(String(row.attempts)) as UpstreamAttempt[]) {
      if (attempt.outcome === 'skipped') continue;
      const endpoint = `${attempt.provider}:${attempt.upstreamModel}`;
      let figures = calls.get(endpoint);
      if (!figures) calls.set(endpoint, (figures = { attempts: 0, failures: 0, durations: [], firstBytes: [] }));
      figures.attempts += 1;
      if (attempt.outcome === 'failed') figures.failures += 1;
      figures.durations.push(attempt.durationMs);
      if (attempt.firstByteMs !== null) figures.firstBytes.push(attempt.firstByteMs);
    }
  }
  const ascending = (values: number[]) => values.sort((a, b) => a - b);
  return [...calls]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([endpoint, figures]) => ({
      endpoint,
      attempts: figures.attempts,
      failures: figures.failures,
      latencyMs: percentiles(ascending(figures.durations))!,
      firstByteMs: percentiles(ascending(figures.firstBytes)),
    }));
}
