/**
 * Row ↔ record mapping shared by the SQLite and PostgreSQL stores. The two schemas use the same
 * column names; only the value representations differ, and the decoders here accept both:
 * integers arrive as number or bigint (SQLite) or as decimal strings (PostgreSQL BIGINT, SUM and
 * COUNT), booleans as 0/1 or true/false, and JSON columns as text in both engines.
 */
import { errors, type GatewayError } from '../core/errors.ts';
import { timeOrderedId } from '../core/ids.ts';
import { JsonText } from '../core/json-text.ts';
import type { Picos, RateMultiplier } from '../core/money.ts';
import type {
  Account,
  ApiKeyRecord,
  Balance,
  ClaimedWebhookDelivery,
  Consent,
  HoldOwner,
  IdempotencyBegin,
  JobKind,
  JobRecord,
  KeyLimits,
  LedgerEntry,
  Organization,
  OwnerKind,
  OwnerPatch,
  OwnerRef,
  RequestLogRecord,
  UpstreamAttempt,
  Reservation,
  ReserveInput,
  SettleOutcome,
  UsageSummaryRow,
  WebhookAttemptOutcome,
  WaitingJobs,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEvent,
} from './store.ts';

export type Row = Record<string, unknown>;

/** The largest value a 64-bit ledger column holds (about 9.2 million USD in pico-USD). */
export const INT64_MAX = 9_223_372_036_854_775_807n;

/** Rejects a money amount that is not a bigint within [minimum, INT64_MAX] before it reaches SQL. */
export function checkAmount(what: string, amount: Picos, minimum: bigint): Picos {
  if (typeof amount !== 'bigint') throw new TypeError(`${what} must be a bigint count of pico-USD`);
  if (amount < minimum || amount > INT64_MAX) {
    throw new RangeError(`${what} ${amount} is outside ${minimum}..${INT64_MAX} pico-USD`);
  }
  return amount;
}

/** A new open reservation as `reserve` asked for it, with its id drawn now. */
export function newReservation(input: ReserveInput, holder: HoldOwner, createdAt: number): Reservation {
  return {
    id: timeOrderedId('res'),
    owner: input.owner,
    amount: input.amount,
    requestId: input.requestId,
    keyId: input.keyId ?? null,
    status: 'open',
    holder,
    createdAt,
    expiresAt: input.expiresAt,
  };
}

/** One key per owner, for maps of wallets held in memory. */
export const walletKey = (owner: OwnerRef): string => `${owner.kind}:${owner.id}`;

export function ownerNotFound(owner: OwnerRef): GatewayError {
  return errors.notFound(owner.kind === 'account' ? 'Account' : 'Organization');
}

export function overflowError(owner: OwnerRef): RangeError {
  return new RangeError(`the credit would take the balance of ${owner.kind} ${owner.id} beyond ${INT64_MAX} pico-USD`);
}

// ---- encoding -------------------------------------------------------------------------------

/** JSON text for a JSON column; undefined and null are SQL NULL. */
export function jsonText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return value instanceof JsonText ? value.text : JSON.stringify(value);
}

/** Booleans as 1/0: SQLite stores them so, and PostgreSQL's boolean input accepts '1' and '0'. */
function flagValue(value: boolean | undefined): 0 | 1 | null {
  return value === undefined ? null : value ? 1 : 0;
}

export interface OwnerColumns {
  readonly name: string;
  readonly community_supply: 0 | 1;
  readonly training_use: 0 | 1;
  readonly rate_numerator: bigint | null;
  readonly rate_denominator: bigint | null;
}

/** Consent is off unless granted explicitly. */
export function newOwnerColumns(input: { name: string; consent?: Partial<Consent>; rate?: RateMultiplier | null }): OwnerColumns {
  const rate = checkRate(input.rate ?? null);
  return {
    name: input.name,
    community_supply: input.consent?.communitySupply ? 1 : 0,
    training_use: input.consent?.trainingUse ? 1 : 0,
    rate_numerator: rate?.numerator ?? null,
    rate_denominator: rate?.denominator ?? null,
  };
}

export interface OwnerPatchColumns {
  /** null keeps the stored value (the UPDATE uses COALESCE). */
  readonly name: string | null;
  readonly community_supply: 0 | 1 | null;
  readonly training_use: 0 | 1 | null;
  /** 1 when the patch sets the rate (possibly to null), 0 when it leaves it alone. */
  readonly set_rate: 0 | 1;
  readonly rate_numerator: bigint | null;
  readonly rate_denominator: bigint | null;
}

export function ownerPatchColumns(patch: OwnerPatch): OwnerPatchColumns {
  const rate = patch.rate === undefined ? null : checkRate(patch.rate);
  return {
    name: patch.name ?? null,
    community_supply: flagValue(patch.communitySupply),
    training_use: flagValue(patch.trainingUse),
    set_rate: patch.rate === undefined ? 0 : 1,
    rate_numerator: rate?.numerator ?? null,
    rate_denominator: rate?.denominator ?? null,
  };
}

function checkRate(rate: RateMultiplier | null): RateMultiplier | null {
  if (rate === null) return null;
  checkAmount('rate numerator', rate.numerator, 0n);
  checkAmount('rate denominator', rate.denominator, 1n);
  return rate;
}

/** The request log's columns, in the order of its CREATE TABLE and of the migrations that added some. */
export const REQUEST_LOG_COLUMNS = [
  'id',
  'owner_kind',
  'owner_id',
  'key_id',
  'route',
  'model',
  'provider',
  'upstream_model',
  'status',
  'http_status',
  'stream',
  'input_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'output_tokens',
  'reasoning_tokens',
  'search_units',
  'cost',
  'error_code',
  'created_at',
  'duration_ms',
  'first_byte_ms',
  'output',
  'blob_keys',
  'expires_at',
  'cache_write_1h_tokens',
  'over_hold',
  'provider_usage',
  'attempts',
  'images',
  'video_seconds',
  'cache_savings',
  'canonical_request',
] as const;

/**
 * The aggregates of a usage summary, in SQL both engines run. A request is served when it was
 * answered with a success status: a stream that broke off after it began is served (its status line
 * was 200, and it is charged for what it produced); a request answered with an error status was
 * refused (no credit, a limit, a bad request, a failed upstream) and has no usage and no cost.
 * Input counts every input token, cached or not: the total prompt size a usage report shows.
 */
export const USAGE_AGGREGATES = `count(*) FILTER (WHERE http_status < 400) AS requests,
  count(*) FILTER (WHERE http_status >= 400) AS refused_requests,
  sum(input_tokens + cache_read_tokens + cache_write_tokens) AS input_tokens,
  sum(output_tokens) AS output_tokens, sum(cost) AS cost,
  count(*) FILTER (WHERE over_hold > 0) AS over_hold_requests, sum(over_hold) AS over_hold`;

/** The request log columns of one record, in engine-neutral values (each engine adapts a few). */
export function requestColumns(record: RequestLogRecord) {
  return {
    id: record.id,
    owner_kind: record.owner.kind,
    owner_id: record.owner.id,
    key_id: record.keyId,
    route: record.route,
    model: record.model,
    provider: record.provider,
    upstream_model: record.upstreamModel,
    status: record.status,
    http_status: record.httpStatus,
    stream: record.stream,
    input_tokens: record.inputTokens,
    cache_read_tokens: record.cacheReadTokens,
    cache_write_tokens: record.cacheWriteTokens,
    output_tokens: record.outputTokens,
    reasoning_tokens: record.reasoningTokens,
    search_units: record.searchUnits,
    cost: checkAmount('request cost', record.cost, 0n),
    over_hold: checkAmount('request cost beyond the hold', record.overHold, 0n),
    error_code: record.errorCode,
    created_at: record.createdAt,
    duration_ms: record.durationMs,
    first_byte_ms: record.firstByteMs,
    output: record.output ?? null,
    blob_keys: record.blobKeys,
    expires_at: record.expiresAt,
    cache_write_1h_tokens: record.cacheWrite1hTokens,
    // JSON text in both engines: kept as the provider wrote it, never queried.
    provider_usage: jsonText(record.providerUsage),
    attempts: jsonText(record.attempts),
    images: record.images,
    video_seconds: record.videoSeconds,
    cache_savings: checkAmount('request cache savings', record.cacheSavings, 0n),
    canonical_request: jsonText(record.canonicalRequest),
  };
}

/** How long after its event a delivery is retried: a failed attempt whose next one would come later gives up. */
export const WEBHOOK_RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** How long after its event a delivery row is kept (then the maintenance sweep deletes it): a day past the retries. */
export const WEBHOOK_DELIVERY_LIFETIME_MS = 2 * WEBHOOK_RETRY_WINDOW_MS;

/** The columns of a new endpoint. */
export function webhookEndpointColumns(input: { owner: OwnerRef; url: string; secret: string; eventTypes: readonly string[] | null }, id: string, now: number) {
  return {
    id,
    owner_kind: input.owner.kind,
    owner_id: input.owner.id,
    url: input.url,
    secret: input.secret,
    event_types: jsonText(input.eventTypes),
    created_at: now,
  };
}

/** The columns every delivery of one event shares; the endpoint and the job come from their rows. */
export function webhookEventColumns(event: WebhookEvent, now: number) {
  return {
    event_id: event.id,
    event_type: event.type,
    body: event.body,
    next_attempt_at: now,
    created_at: event.createdAt,
    give_up_at: event.createdAt + WEBHOOK_RETRY_WINDOW_MS,
    expires_at: event.createdAt + WEBHOOK_DELIVERY_LIFETIME_MS,
  };
}

/** The columns that record an attempt's end; `next_attempt_at` null keeps the stored time. */
export function webhookAttemptColumns(outcome: WebhookAttemptOutcome) {
  return outcome.delivered
    ? { delivered: 1 as const, last_status: outcome.httpStatus, last_error: null, next_attempt_at: null }
    : { delivered: 0 as const, last_status: outcome.httpStatus, last_error: outcome.error, next_attempt_at: outcome.nextAttemptAt };
}

// ---- decoding -------------------------------------------------------------------------------

function integer(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint' || typeof value === 'string') return Number(value);
  throw new TypeError(`expected an integer column, got ${typeof value}`);
}

function nullableInteger(value: unknown): number | null {
  return value === null || value === undefined ? null : integer(value);
}

/** Exact 64-bit integers: never routed through a double. */
export function bigintValue(value: unknown): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'string') return BigInt(value);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  throw new TypeError(`expected an exact integer column, got ${typeof value} ${String(value)}`);
}

function flag(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return value !== 0 && value !== 0n;
  throw new TypeError(`expected a boolean column, got ${typeof value}`);
}

function text(value: unknown): string {
  if (typeof value !== 'string') throw new TypeError(`expected a text column, got ${typeof value}`);
  return value;
}

function nullableText(value: unknown): string | null {
  return value === null || value === undefined ? null : text(value);
}

function json(value: unknown): unknown {
  return value === null || value === undefined ? null : JSON.parse(text(value));
}

function owner(row: Row): OwnerRef {
  return { kind: text(row.owner_kind) as OwnerKind, id: text(row.owner_id) };
}

function consent(row: Row): Consent {
  return { communitySupply: flag(row.community_supply), trainingUse: flag(row.training_use) };
}

function rate(row: Row): RateMultiplier | null {
  if (row.rate_numerator === null || row.rate_numerator === undefined) return null;
  return { numerator: bigintValue(row.rate_numerator), denominator: bigintValue(row.rate_denominator) };
}

export function organizationFromRow(row: Row): Organization {
  return {
    id: text(row.id),
    name: text(row.name),
    consent: consent(row),
    rate: rate(row),
    limits: json(row.limits) as KeyLimits | null,
    createdAt: integer(row.created_at),
  };
}

export function accountFromRow(row: Row): Account {
  return {
    id: text(row.id),
    name: text(row.name),
    organizationId: nullableText(row.organization_id),
    consent: consent(row),
    rate: rate(row),
    createdAt: integer(row.created_at),
  };
}

export function keyFromRow(row: Row): ApiKeyRecord {
  return {
    id: text(row.id),
    owner: owner(row),
    name: nullableText(row.name),
    hash: text(row.hash),
    displayPrefix: text(row.display_prefix),
    scopes: json(row.scopes) as string[] | null,
    allowedModels: json(row.allowed_models) as string[] | null,
    limits: json(row.limits) as KeyLimits | null,
    createdAt: integer(row.created_at),
    revokedAt: nullableInteger(row.revoked_at),
  };
}

export function ledgerEntryFromRow(row: Row): LedgerEntry {
  return {
    id: text(row.id),
    owner: owner(row),
    kind: text(row.kind) as LedgerEntry['kind'],
    amount: bigintValue(row.amount),
    reservationId: nullableText(row.reservation_id),
    requestId: nullableText(row.request_id),
    keyId: nullableText(row.key_id),
    note: nullableText(row.note),
    createdAt: integer(row.created_at),
  };
}

export function reservationFromRow(row: Row): Reservation {
  return {
    id: text(row.id),
    owner: owner(row),
    amount: bigintValue(row.amount),
    requestId: nullableText(row.request_id),
    keyId: nullableText(row.key_id),
    status: text(row.status) as Reservation['status'],
    holder: holderFromRow(row),
    createdAt: integer(row.created_at),
    expiresAt: integer(row.expires_at),
  };
}

function holderFromRow(row: Row): HoldOwner | null {
  if (row.holder_kind === null) return null;
  const kind = text(row.holder_kind) as HoldOwner['kind'];
  switch (kind) {
    case 'instance':
    case 'job':
      return { kind, id: text(row.holder_id) };
    default:
      throw new Error(`unknown reservation holder kind ${String(kind satisfies never)}`);
  }
}

/** A wallet row (or its absence: an owner that never held credit) as balance and reserved. */
export function balanceFromRow(row: Row | undefined): Balance {
  const balance = row ? bigintValue(row.balance) : 0n;
  const reserved = row ? bigintValue(row.reserved) : 0n;
  return { balance, reserved, available: balance - reserved };
}

/** A settle's result from the charged amount and the reservation it closed. */
export function settleOutcome(cost: Picos, reserved: Picos, charged: Picos): SettleOutcome {
  const released = reserved > charged ? reserved - charged : 0n;
  return { charged, released, shortfall: cost - charged };
}

export function requestFromRow(row: Row): RequestLogRecord {
  return {
    id: text(row.id),
    owner: owner(row),
    keyId: text(row.key_id),
    route: text(row.route),
    model: nullableText(row.model),
    provider: nullableText(row.provider),
    upstreamModel: nullableText(row.upstream_model),
    status: text(row.status) as RequestLogRecord['status'],
    httpStatus: integer(row.http_status),
    stream: flag(row.stream),
    inputTokens: integer(row.input_tokens),
    cacheReadTokens: integer(row.cache_read_tokens),
    cacheWriteTokens: integer(row.cache_write_tokens),
    cacheWrite1hTokens: nullableInteger(row.cache_write_1h_tokens),
    outputTokens: integer(row.output_tokens),
    reasoningTokens: integer(row.reasoning_tokens),
    searchUnits: integer(row.search_units),
    cost: bigintValue(row.cost),
    overHold: bigintValue(row.over_hold),
    errorCode: nullableText(row.error_code),
    createdAt: integer(row.created_at),
    durationMs: integer(row.duration_ms),
    firstByteMs: nullableInteger(row.first_byte_ms),
    output: json(row.output),
    canonicalRequest: json(row.canonical_request),
    providerUsage: json(row.provider_usage) as RequestLogRecord['providerUsage'],
    blobKeys: json(row.blob_keys) as string[],
    // Rows written before attempts were recorded have none.
    attempts: (json(row.attempts) ?? []) as UpstreamAttempt[],
    expiresAt: integer(row.expires_at),
    images: integer(row.images),
    videoSeconds: integer(row.video_seconds),
    cacheSavings: bigintValue(row.cache_savings),
  };
}

export function usageFromRow(row: Row): UsageSummaryRow {
  return {
    model: nullableText(row.model),
    requests: integer(row.requests),
    refusedRequests: integer(row.refused_requests),
    inputTokens: integer(row.input_tokens),
    outputTokens: integer(row.output_tokens),
    cost: bigintValue(row.cost),
    overHoldRequests: integer(row.over_hold_requests),
    overHold: bigintValue(row.over_hold),
  };
}

export function jobFromRow(row: Row): JobRecord {
  return {
    id: text(row.id),
    kind: text(row.kind) as JobRecord['kind'],
    owner: owner(row),
    keyId: text(row.key_id),
    status: text(row.status) as JobRecord['status'],
    payload: json(row.payload),
    result: json(row.result),
    reservationId: nullableText(row.reservation_id),
    createdAt: integer(row.created_at),
    updatedAt: integer(row.updated_at),
    expiresAt: integer(row.expires_at),
    leaseOwner: nullableText(row.lease_owner),
    leaseUntil: nullableInteger(row.lease_until),
    attempts: integer(row.attempts),
    dispatchedAt: nullableInteger(row.dispatched_at),
    cost: row.cost === null || row.cost === undefined ? null : bigintValue(row.cost),
    checkpoint: row.checkpoint === null || row.checkpoint === undefined ? null : json(row.checkpoint),
    nextAttemptAt: nullableInteger(row.next_attempt_at),
  };
}

/** The columns of a count of waiting jobs by kind (both engines; grouped by kind). */
export const WAITING_COUNTS = `kind,
  SUM(CASE WHEN status = 'queued' THEN 1 ELSE 0 END) AS queued,
  SUM(CASE WHEN status = 'in_progress' AND next_attempt_at IS NOT NULL THEN 1 ELSE 0 END) AS parked`;

export function waitingJobs(rows: readonly Row[]): Map<JobKind, WaitingJobs> {
  return new Map(rows.map((row) => [text(row.kind) as JobKind, { queued: Number(row.queued), parked: Number(row.parked) }]));
}

export function webhookEndpointFromRow(row: Row): WebhookEndpoint {
  return {
    id: text(row.id),
    owner: owner(row),
    url: text(row.url),
    secret: text(row.secret),
    eventTypes: json(row.event_types) as string[] | null,
    createdAt: integer(row.created_at),
  };
}

export function webhookDeliveryFromRow(row: Row): WebhookDelivery {
  return {
    endpointId: text(row.endpoint_id),
    eventId: text(row.event_id),
    eventType: text(row.event_type),
    jobId: text(row.job_id),
    body: text(row.body),
    status: text(row.status) as WebhookDelivery['status'],
    attempts: integer(row.attempts),
    nextAttemptAt: integer(row.next_attempt_at),
    leaseOwner: nullableText(row.lease_owner),
    leaseUntil: nullableInteger(row.lease_until),
    lastStatus: nullableInteger(row.last_status),
    lastError: nullableText(row.last_error),
    createdAt: integer(row.created_at),
    giveUpAt: integer(row.give_up_at),
    finishedAt: nullableInteger(row.finished_at),
    expiresAt: integer(row.expires_at),
  };
}

/** Claimed rows, with their endpoint's url and secret, most overdue first. */
export function claimedWebhookDeliveriesFromRows(rows: readonly Row[]): ClaimedWebhookDelivery[] {
  return rows
    .map((row) => ({ ...webhookDeliveryFromRow(row), url: text(row.url), secret: text(row.secret) }))
    .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.createdAt - b.createdAt);
}

/**
 * What an existing idempotency record means for a new request that is not allowed to claim it
 * (the record is live: not expired, and either completed or held by a running request).
 */
export function idempotencyOutcome(row: Row, bodyHash: string): IdempotencyBegin {
  if (text(row.body_hash) !== bodyHash) return { state: 'body_mismatch' };
  if (text(row.state) === 'in_progress') return { state: 'in_progress' };
  if (row.response_body === null || row.response_body === undefined) return { state: 'not_replayable' };
  return {
    state: 'replay',
    status: integer(row.response_status),
    headers: (json(row.response_headers) ?? {}) as Record<string, string>,
    body: text(row.response_body),
  };
}
