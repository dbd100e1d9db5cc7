/**
 * The storage contract. Two implementations (SQLite via node:sqlite, PostgreSQL via pg) pass one
 * shared contract suite (test/storage/contract.ts). Money is pico-USD bigint; times are epoch
 * milliseconds (numbers) so both engines store them the same way.
 *
 * Owners: credit, consent and rate belong to an account or an organization. An organization key
 * spends the organization's credit and follows its consent; an account key the account's.
 */
import type { Picos, RateMultiplier } from '../core/money.ts';
import type { BlobStore } from './blobs.ts';
import type { AuditStore, DashboardListStore, PeopleStore } from './people.ts';
import type { DashboardViewStore } from './dashboard-views.ts';
import type { UsageStore } from './usage.ts';

export type OwnerKind = 'account' | 'organization';

export interface OwnerRef {
  readonly kind: OwnerKind;
  readonly id: string;
}

export interface Consent {
  readonly communitySupply: boolean;
  readonly trainingUse: boolean;
}

export interface Organization {
  readonly id: string;
  readonly name: string;
  readonly consent: Consent;
  /** Billing multiplier; null means the configured default. */
  readonly rate: RateMultiplier | null;
  /** Limits over all the organization's keys together (docs/limits.md); null for none. */
  readonly limits: KeyLimits | null;
  readonly createdAt: number;
}

export interface Account {
  readonly id: string;
  readonly name: string;
  readonly organizationId: string | null;
  readonly consent: Consent;
  readonly rate: RateMultiplier | null;
  readonly createdAt: number;
}

export interface OwnerPatch {
  readonly name?: string;
  readonly communitySupply?: boolean;
  readonly trainingUse?: boolean;
  /** null resets to the configured default. */
  readonly rate?: RateMultiplier | null;
}

/** What docs/limits.md describes; every field optional, an absent one is no limit. */
export interface KeyLimits {
  /** Requests per minute (GCRA: this many at once, then one every 60/N seconds). */
  readonly requests_per_minute?: number;
  /** Requests running at once; streams and background jobs count until they end. */
  readonly concurrent_requests?: number;
  /** Input + output tokens per minute: pre-checked with a call's estimate, counted at settlement. */
  readonly tokens_per_minute?: number;
  /** USD this key may spend per calendar day, UTC (decimal string). */
  readonly spend_per_day_usd?: string;
  /** USD this key may spend per calendar month, UTC (decimal string). */
  readonly spend_per_month_usd?: string;
  /** USD this key may spend in total (decimal string). */
  readonly spend_limit_usd?: string;
}

/**
 * A spend limit a hold must fit (docs/limits.md): the charges since `since` plus the open holds of
 * the key (holder `key`) or of the whole owner (holder `organization`: an organization's keys all
 * spend its wallet), plus the new hold, may not pass `max`.
 */
export interface SpendCap {
  readonly limit: 'spend_per_day' | 'spend_per_month' | 'spend_total';
  readonly holder: 'key' | 'organization';
  /** Charges from this time on count (epoch ms; 0 for a total). */
  readonly since: number;
  readonly max: Picos;
}

export interface SpentSums {
  readonly since: readonly [Picos, Picos, Picos];
  readonly held: Picos;
}

/** What a capped hold came to: the reservation, or why there is none. */
export type CappedReservation =
  | { readonly reservation: Reservation }
  | { readonly refused: 'credit' }
  | { readonly refused: 'cap'; readonly cap: SpendCap; readonly spent: Picos };

export interface ApiKeyRecord {
  readonly id: string;
  readonly owner: OwnerRef;
  readonly name: string | null;
  /** SHA-256 of the plaintext key, hex. The plaintext is never stored. */
  readonly hash: string;
  /** The first characters of the key, for display (`gateway_AbCd…`). */
  readonly displayPrefix: string;
  /** null = unrestricted. */
  readonly scopes: readonly string[] | null;
  /** null = unrestricted; otherwise canonical model ids. */
  readonly allowedModels: readonly string[] | null;
  readonly limits: KeyLimits | null;
  readonly createdAt: number;
  readonly revokedAt: number | null;
}

export type LedgerEntryKind = 'credit' | 'charge';

/**
 * The ledger holds only facts that change the balance: credit grants and settled charges.
 * Open reservations hold money aside without being entries; balance = Σcredit − Σcharge and
 * available = balance − Σopen reservations, both derivable at any time.
 */
export interface LedgerEntry {
  readonly id: string;
  readonly owner: OwnerRef;
  readonly kind: LedgerEntryKind;
  /** Always positive; the kind gives the direction. */
  readonly amount: Picos;
  readonly reservationId: string | null;
  readonly requestId: string | null;
  /** The key whose hold a charge settled; null for credits (and rows of earlier versions). */
  readonly keyId: string | null;
  readonly note: string | null;
  readonly createdAt: number;
}

export interface Balance {
  /** Σcredits − Σcharges. */
  readonly balance: Picos;
  /** Σ amounts of open reservations. */
  readonly reserved: Picos;
  /** balance − reserved: what a new reservation can take. Never negative. */
  readonly available: Picos;
}

export type ReservationStatus = 'open' | 'settled' | 'released';

/**
 * Who keeps a reservation open, and so whose end returns it.
 * - `instance`: the gateway instance (server process) serving the request. When that instance
 *   dies, its holds are released by the next server on the SQLite file, or by a live instance once
 *   the dead one's heartbeat has lapsed on PostgreSQL (docs/billing.md).
 * - `job`: a background job (docs/jobs.md), which outlives the process that queued it. Its hold is
 *   settled or released when the job ends, whichever instance ends it, and otherwise expires with
 *   the job; no instance's death releases it.
 */
export interface HoldOwner {
  readonly kind: 'instance' | 'job';
  /** The instance's id (Store.instanceId) or the job's id. */
  readonly id: string;
}

export interface Reservation {
  readonly id: string;
  readonly owner: OwnerRef;
  readonly amount: Picos;
  readonly requestId: string | null;
  /** The key that made the hold; its charge carries it too. */
  readonly keyId: string | null;
  readonly status: ReservationStatus;
  /** null for reservations made before holders were recorded: they are left to their expiry. */
  readonly holder: HoldOwner | null;
  readonly createdAt: number;
  readonly expiresAt: number;
}

export interface ReserveInput {
  readonly owner: OwnerRef;
  readonly amount: Picos;
  readonly requestId: string | null;
  readonly expiresAt: number;
  readonly holder?: HoldOwner;
  /** The key making the hold (its spend limits count it); null for none. */
  readonly keyId?: string | null;
}

export interface SettleOutcome {
  /** What was charged: the cost, capped at the reservation (and so that the balance never goes below zero). */
  readonly charged: Picos;
  /** The part of the reservation returned to the available balance. */
  readonly released: Picos;
  /** cost − charged: what the cap left unbilled (a cost beyond the reservation); else 0. */
  readonly shortfall: Picos;
}

export interface LedgerStore {
  addCredit(owner: OwnerRef, amount: Picos, note?: string | null): Promise<LedgerEntry>;
  getBalance(owner: OwnerRef): Promise<Balance>;
  /**
   * Atomic conditional hold: succeeds only when available ≥ amount, else returns null and changes
   * nothing. Concurrent calls can never together take available below zero. The hold belongs to
   * `holder`, by default this store's instance.
   */
  reserve(input: ReserveInput): Promise<Reservation | null>;
  /**
   * `reserve`, also refused when the hold does not fit a spend cap. Atomic against every other
   * hold and settlement of the owner, other instances included: concurrent holds can never together
   * pass a cap.
   */
  reserveCapped(input: ReserveInput & { readonly caps: readonly SpendCap[] }): Promise<CappedReservation>;
  /**
   * What a key (or an owner, over all its keys) was charged since each of three times, and what it
   * holds open now: what its spend caps count (the admin API shows it).
   */
  spentBy(holder: { readonly keyId: string } | { readonly owner: OwnerRef }, times: readonly [number, number, number]): Promise<SpentSums>;
  /**
   * Turns an open reservation into a charge of `cost` and releases the rest. A cost above the
   * reservation is charged the reservation: a hold is the most a request can cost, so that no
   * charge passes the spend limits the hold was checked against (docs/billing.md, "Money caps").
   * Returns null when the reservation is not open (already settled, released, or released by
   * releaseExpired), so a retry can never charge twice.
   */
  settle(reservationId: string, cost: Picos, requestId?: string | null): Promise<SettleOutcome | null>;
  /** Releases an open reservation in full (a failed or cancelled request). False when not open. */
  release(reservationId: string): Promise<boolean>;
  /** Releases every open reservation whose expiry is before `now`; returns how many. */
  releaseExpired(now: number): Promise<number>;
  getReservation(reservationId: string): Promise<Reservation | null>;
  listEntries(owner: OwnerRef): Promise<LedgerEntry[]>;
}

export interface NewAccount {
  readonly name: string;
  readonly organizationId?: string | null;
  readonly consent?: Partial<Consent>;
  readonly rate?: RateMultiplier | null;
}

export interface DirectoryStore {
  createOrganization(input: { name: string; consent?: Partial<Consent>; rate?: RateMultiplier | null }): Promise<Organization>;
  getOrganization(id: string): Promise<Organization | null>;
  listOrganizations(): Promise<Organization[]>;
  updateOrganization(id: string, patch: OwnerPatch): Promise<Organization | null>;

  createAccount(input: NewAccount): Promise<Account>;
  /**
   * Creates an account only while the directory is empty (no account, no organization): the demo
   * account of a first start. Null when it is not empty. Atomic against every other caller, other
   * processes and instances included, so concurrent first starts create one account.
   */
  createFirstAccount(input: { name: string }): Promise<Account | null>;
  /** True while there is no account and no organization (a server with a real catalog says how to create the first). */
  isDirectoryEmpty(): Promise<boolean>;
  getAccount(id: string): Promise<Account | null>;
  listAccounts(): Promise<Account[]>;
  updateAccount(id: string, patch: OwnerPatch): Promise<Account | null>;

  createKey(input: {
    owner: OwnerRef;
    name?: string | null;
    hash: string;
    displayPrefix: string;
    scopes?: readonly string[] | null;
    allowedModels?: readonly string[] | null;
    limits?: KeyLimits | null;
  }): Promise<ApiKeyRecord>;
  getKeyByHash(hash: string): Promise<ApiKeyRecord | null>;
  getKey(id: string): Promise<ApiKeyRecord | null>;
  listKeys(owner?: OwnerRef): Promise<ApiKeyRecord[]>;
  revokeKey(id: string, at: number): Promise<ApiKeyRecord | null>;
  /** Replaces a key's limits (null: none); null when there is no such key. */
  setKeyLimits(id: string, limits: KeyLimits | null): Promise<ApiKeyRecord | null>;
  /** Replaces an organization's limits (null: none); null when there is no such organization. */
  setOrganizationLimits(id: string, limits: KeyLimits | null): Promise<Organization | null>;
}

export type RequestStatus = 'completed' | 'failed' | 'cancelled' | 'incomplete';

/**
 * One upstream attempt of a request, in the order they were made; times in milliseconds from the
 * request's arrival. A failed attempt's status and code are the gateway's reading of the upstream's
 * answer (what the client would have been told had it been the last).
 */
export type UpstreamAttempt = { readonly provider: string; readonly upstreamModel: string; readonly startMs: number } & (
  | { readonly outcome: 'served'; readonly firstByteMs: number; readonly durationMs: number }
  | {
      readonly outcome: 'failed';
      readonly firstByteMs: number | null;
      readonly durationMs: number;
      readonly status: number;
      readonly errorCode: string | null;
      readonly message: string;
    }
  /** Passed over without a call: its circuit breaker was open. */
  | { readonly outcome: 'skipped'; readonly reason: 'circuit_open' }
);

/** One row per served request: the audit trail for usage reports and `GET /v1/outputs/{id}`. */
export interface RequestLogRecord {
  readonly id: string;
  readonly owner: OwnerRef;
  readonly keyId: string;
  /** chat | messages | responses | images.generations | images.edits | videos | embeddings */
  readonly route: string;
  readonly model: string | null;
  readonly provider: string | null;
  readonly upstreamModel: string | null;
  readonly status: RequestStatus;
  readonly httpStatus: number;
  readonly stream: boolean;
  readonly inputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  /** The part of cacheWriteTokens written for 1 hour; null when the provider reported no split. */
  readonly cacheWrite1hTokens: number | null;
  readonly outputTokens: number;
  readonly reasoningTokens: number;
  readonly searchUnits: number;
  /** Images delivered (image routes). */
  readonly images: number;
  /** Seconds of video delivered (video routes). */
  readonly videoSeconds: number;
  /** What cache reads saved against the uncached input price, at the payer's rate (never charged; shown in usage). */
  readonly cacheSavings: Picos;
  /** What was charged. */
  readonly cost: Picos;
  /**
   * The part of the priced cost beyond the request's hold, which was not charged: the upstream
   * delivered or counted more than the request allowed (docs/billing.md, "Money caps"); 0 otherwise.
   */
  readonly overHold: Picos;
  readonly errorCode: string | null;
  readonly createdAt: number;
  readonly durationMs: number;
  readonly firstByteMs: number | null;
  /** The stored output (JSON the client received, or a summary for streams); kept 24 h. */
  readonly output: unknown;
  /**
   * The canonical request as the dialect decoded it (JSON; file bytes reduced to their size), kept
   * with the output under the same consent (`store` not false) and for as long; null otherwise.
   */
  readonly canonicalRequest: unknown;
  /**
   * The usage object as the provider reported it, in its own field names (the last one of a
   * stream), so that a disputed charge traces back to what the provider said; null when it
   * reported none (a refused request, a stream cut before its usage).
   */
  readonly providerUsage: Readonly<Record<string, unknown>> | null;
  /** Blob keys of stored media outputs (images, videos). */
  readonly blobKeys: readonly string[];
  /** The upstream attempts, in order; empty when none was made (refused before, or replayed). */
  readonly attempts: readonly UpstreamAttempt[];
  readonly expiresAt: number;
}

export interface UsageSummaryRow {
  readonly model: string | null;
  /** Requests served: answered with a success status (rows.ts, USAGE_AGGREGATES). */
  readonly requests: number;
  /** Requests answered with an error status instead (402 for credit among them): no usage, no cost. */
  readonly refusedRequests: number;
  /** Every input token, cached or not (input + cache read + cache write). */
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cost: Picos;
  /** Requests whose upstream reported more than their hold, and the sum of what that left unbilled. */
  readonly overHoldRequests: number;
  readonly overHold: Picos;
}

export interface RequestLogStore {
  /** Appends rows; implementations may batch them, but a row is readable once the promise settles. */
  recordRequests(records: readonly RequestLogRecord[]): Promise<void>;
  getRequest(id: string): Promise<RequestLogRecord | null>;
  usageSummary(owner: OwnerRef, since: number): Promise<UsageSummaryRow[]>;
  deleteExpiredRequests(now: number): Promise<number>;
}

export type IdempotencyBegin =
  | { readonly state: 'started' }
  | { readonly state: 'in_progress' }
  | { readonly state: 'body_mismatch' }
  | { readonly state: 'not_replayable' }
  | { readonly state: 'replay'; readonly status: number; readonly headers: Record<string, string>; readonly body: string };

export interface IdempotencyStore {
  /**
   * Claims (keyId, route, idempotencyKey) for a body hash, or reports what exists. A record whose
   * owner died mid-request (lockedUntil passed) may be claimed again.
   */
  beginIdempotent(input: {
    keyId: string;
    route: string;
    idempotencyKey: string;
    bodyHash: string;
    now: number;
    lockedUntil: number;
    expiresAt: number;
  }): Promise<IdempotencyBegin>;
  /** Stores the replayable result; `body` null marks a non-replayable success (stream, too large). */
  completeIdempotent(input: {
    keyId: string;
    route: string;
    idempotencyKey: string;
    status: number;
    headers: Record<string, string>;
    body: string | null;
  }): Promise<void>;
  /** Forgets a claim whose request failed, so the client may retry with the same key. */
  abandonIdempotent(input: { keyId: string; route: string; idempotencyKey: string }): Promise<void>;
  deleteExpiredIdempotency(now: number): Promise<number>;
}

/** The kinds of job the gateway defines itself (their webhook events and dashboard filters name them). */
export type BuiltInJobKind = 'response' | 'video';
/**
 * A job's kind: a built-in one, or any other a handler is registered for. The store takes any name;
 * a submission of a kind with no handler is refused (jobs/jobs.ts).
 */
export type JobKind = BuiltInJobKind | (string & {});
export type JobStatus = 'queued' | 'in_progress' | 'completed' | 'incomplete' | 'failed' | 'cancelled';
export const ENDED_JOB_STATUSES = ['completed', 'incomplete', 'failed', 'cancelled'] as const satisfies readonly JobStatus[];
export type EndedJobStatus = (typeof ENDED_JOB_STATUSES)[number];

/** A background response or a video job: durable, claimable by any instance, cancellable (docs/jobs.md). */
export interface JobRecord {
  readonly id: string;
  readonly kind: JobKind;
  readonly owner: OwnerRef;
  readonly keyId: string;
  readonly status: JobStatus;
  /** What the runner needs to do the work (decoded request, model, endpoint plan). */
  readonly payload: unknown;
  /** The client-visible object (response object, video job), updated as the job moves. */
  readonly result: unknown;
  /** The credit hold the job runs on; its holder is the job. */
  readonly reservationId: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly expiresAt: number;
  /** The instance working on it and until when; another may claim it after. */
  readonly leaseOwner: string | null;
  readonly leaseUntil: number | null;
  readonly attempts: number;
  /**
   * When a worker first sent the job's work upstream; null while nothing was sent. A job taken over
   * after a crash is retried only while this is null (the upstream may otherwise have done, and
   * billed, the work already).
   */
  readonly dispatchedAt: number | null;
  /**
   * What the ended job is to be charged (its hold is settled with this), set with a `completed` or
   * `incomplete` status; null otherwise. Lets any instance finish the charge if the one that ended
   * the job died before settling.
   */
  readonly cost: Picos | null;
  /**
   * What its worker recorded of work that goes on upstream without it (a video generation's
   * operation; JSON), or null. A job taken over after it was sent upstream is resumed from its
   * checkpoint when it has one, and failed when it has none.
   */
  readonly checkpoint: unknown;
  /**
   * When the next step of a parked job is due (a start-and-poll job between two looks at its
   * operation: in progress, without a lease); null otherwise.
   */
  readonly nextAttemptAt: number | null;
}

export type NewJob = Omit<JobRecord, 'leaseOwner' | 'leaseUntil' | 'attempts' | 'updatedAt' | 'dispatchedAt' | 'cost' | 'checkpoint' | 'nextAttemptAt'>;

export interface JobPatch {
  readonly status?: JobStatus;
  readonly result?: unknown;
  readonly payload?: unknown;
  /** null clears the lease (and its owner). */
  readonly leaseUntil?: number | null;
  readonly dispatchedAt?: number;
  readonly cost?: Picos;
  readonly checkpoint?: unknown;
  /** Parks the job until then (with `leaseUntil: null`): claimable again once it is due. */
  readonly nextAttemptAt?: number;
  readonly now: number;
}

export interface WaitingJobs {
  readonly queued: number;
  readonly parked: number;
}

export interface JobStore {
  /** Creates the job durably: once the promise resolves, a crash does not lose it (nor, on SQLite, the writes before it). */
  createJob(job: NewJob): Promise<JobRecord>;
  getJob(id: string): Promise<JobRecord | null>;
  /**
   * Leases a claimable job of a kind: queued, parked and due, or in progress with a lease that
   * expired or was cleared; never one past its expiresAt; null when none. Of the owners with
   * claimable jobs, the one with the fewest jobs of the kind under a live lease (on any instance)
   * goes first, then the oldest job: one owner's backlog does not hold another's jobs back. A
   * claim counts as an attempt unless the job was parked (a due step of its operation).
   */
  claimJob(kind: JobKind, worker: string, now: number, leaseUntil: number): Promise<JobRecord | null>;
  /**
   * Compare-and-set: applies the patch only when the job's status is one of `from` (and, with
   * `leaseOwner`, while that worker holds its lease). Returns the updated job, or null when the job
   * had moved on (a cancel won the race, or another instance took it over).
   */
  transitionJob(id: string, from: readonly JobStatus[], patch: JobPatch, leaseOwner?: string): Promise<JobRecord | null>;
  /**
   * Extends the leases `worker` holds on these in-progress jobs; returns the ids it still holds.
   * A job missing from the answer was cancelled or taken over: its worker stops.
   */
  renewLeases(ids: readonly string[], worker: string, now: number, leaseUntil: number): Promise<string[]>;
  /**
   * Clears the leases of in-progress jobs held by any worker other than `worker`, so that they can be
   * claimed at once; returns how many. Only for the SQLite file's server at start: its lock proves
   * that whoever held them is gone.
   */
  releaseLeasesHeldElsewhere(worker: string, now: number): Promise<number>;
  /**
   * Ended jobs whose hold is still open and that have not changed since `endedBefore`: the instance
   * that ended them died before settling or releasing. Oldest first, at most `limit`.
   */
  endedJobsHoldingCredit(endedBefore: number, limit: number): Promise<JobRecord[]>;
  /** Queued jobs (the backlog) and parked ones (operations between two steps) by kind; kinds without either are absent. */
  countWaitingJobs(now: number): Promise<Map<JobKind, WaitingJobs>>;
  deleteExpiredJobs(now: number): Promise<number>;
}

/** A URL an account or organization registered to be told when its jobs end. */
export interface WebhookEndpoint {
  readonly id: string;
  readonly owner: OwnerRef;
  readonly url: string;
  /** The signing secret in the Standard Webhooks format (`whsec_` + base64), shown once at creation. */
  readonly secret: string;
  /** The event types it takes; null = every type. */
  readonly eventTypes: readonly string[] | null;
  readonly createdAt: number;
}

/** One event about one job, as every endpoint that takes it receives it. */
export interface WebhookEvent {
  /** Derived from the job and the type, so that every instance that announces the job names it alike. */
  readonly id: string;
  readonly type: string;
  /** The request body, signed and sent unchanged on every attempt. */
  readonly body: string;
  /** When the event happened: the job's end. The retries stop WEBHOOK_RETRY_WINDOW_MS after it (rows.ts). */
  readonly createdAt: number;
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event for one endpoint: a row of the outbox, identified by (endpointId, eventId). */
export interface WebhookDelivery {
  readonly endpointId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly jobId: string;
  readonly body: string;
  readonly status: WebhookDeliveryStatus;
  /** Attempts begun (each claim counts one). */
  readonly attempts: number;
  /** When a pending delivery is next due. */
  readonly nextAttemptAt: number;
  /** The instance sending it and until when; another may claim it after. */
  readonly leaseOwner: string | null;
  readonly leaseUntil: number | null;
  /** The HTTP status of the last attempt; null when it got none (refused address, timeout, connection). */
  readonly lastStatus: number | null;
  readonly lastError: string | null;
  /** The event's time. */
  readonly createdAt: number;
  /** A failed attempt whose next one would come after this gives up. */
  readonly giveUpAt: number;
  /** When it was delivered or given up. */
  readonly finishedAt: number | null;
  readonly expiresAt: number;
}

/** A claimed delivery with what sending it takes from its endpoint. */
export interface ClaimedWebhookDelivery extends WebhookDelivery {
  readonly url: string;
  readonly secret: string;
}

/** The end of one claimed attempt. */
export type WebhookAttemptOutcome =
  | { readonly delivered: true; readonly httpStatus: number }
  | {
      readonly delivered: false;
      readonly httpStatus: number | null;
      readonly error: string;
      /** When to try again; past the delivery's giveUpAt, it is marked failed instead. */
      readonly nextAttemptAt: number;
    };

/**
 * Webhooks as an outbox filled from the jobs table: ended jobs are announced (turned into one
 * pending delivery per matching endpoint), and deliveries are claimed with a lease, sent, and
 * completed or rescheduled. Every step is safe against other instances doing the same at once.
 */
export interface WebhookStore {
  createWebhookEndpoint(input: { owner: OwnerRef; url: string; secret: string; eventTypes: readonly string[] | null }): Promise<WebhookEndpoint>;
  getWebhookEndpoint(id: string): Promise<WebhookEndpoint | null>;
  /** An owner's endpoints, or every endpoint; oldest first. */
  listWebhookEndpoints(owner?: OwnerRef): Promise<WebhookEndpoint[]>;
  /** Deletes an endpoint and its deliveries (pending ones are never sent); null when unknown. */
  deleteWebhookEndpoint(id: string): Promise<WebhookEndpoint | null>;

  /**
   * Jobs to announce, earliest end first: ended (a terminal status), with no credit hold still open
   * (their worker settles or releases it, and may amend the result on the way: the result is final
   * once the hold is), and not announced yet.
   */
  unannouncedJobs(limit: number): Promise<JobRecord[]>;
  /**
   * Announces an ended job: one pending delivery of `event`, due at `now`, for every endpoint whose
   * owner is the job's (same kind and id) and that takes the event's type; then marks the job
   * announced. `event` null (an end no event type describes) only marks it. Does nothing for a
   * job that unannouncedJobs would not return (unknown, running, holding credit, or announced
   * already); a delivery that exists already (same endpoint and event id) is kept as it is.
   * Returns the deliveries it created.
   */
  announceJob(input: { jobId: string; event: WebhookEvent | null; now: number }): Promise<number>;
  /**
   * Leases up to `limit` pending deliveries due at `now` whose lease is free or lapsed, most
   * overdue first, counting an attempt on each. Concurrent claimers never take the same one.
   */
  claimWebhookDeliveries(input: { worker: string; now: number; leaseUntil: number; limit: number }): Promise<ClaimedWebhookDelivery[]>;
  /**
   * Records how a claimed attempt ended: delivered, or due again at `nextAttemptAt`, or failed for
   * good when that is past its giveUpAt. The lease is released. Null when `worker` no longer holds
   * the lease (it lapsed and another claimed it) or the delivery is gone: nothing changes.
   */
  completeWebhookAttempt(input: {
    endpointId: string;
    eventId: string;
    worker: string;
    now: number;
    outcome: WebhookAttemptOutcome;
  }): Promise<WebhookDelivery | null>;
  /** Deliveries of one endpoint or of one job, oldest event first. */
  listWebhookDeliveries(filter: { endpointId?: string; jobId?: string }): Promise<WebhookDelivery[]>;
  /** How many deliveries are pending (due or not). */
  countPendingWebhookDeliveries(): Promise<number>;
  deleteExpiredWebhookDeliveries(now: number): Promise<number>;
}

/** A monotonically increasing version bumped by every admin change; instances poll it to drop caches. */
export interface ChangeFeed {
  bumpVersion(): Promise<number>;
  currentVersion(): Promise<number>;
}

/**
 * The public model names (ids and aliases) of the catalog a server serves, recorded at its start:
 * the `gateway` command checks `--allowed-models` against the catalog actually served, which it
 * cannot know from its own environment.
 */
export interface ServedModelsStore {
  /** Replaces the recorded names (name → model id) with those of the server starting now. */
  recordServedModels(names: ReadonlyMap<string, string>): Promise<void>;
  /** The recorded names (name → model id); empty before any server has started on this database. */
  servedModels(): Promise<ReadonlyMap<string, string>>;
}

/** What an instance reports of itself with each heartbeat (the dashboard's health page). */
export interface InstanceVitals {
  readonly version: string;
  /** Epoch ms of the process's start. */
  readonly startedAt: number;
  readonly jobsRunning: number;
  /** Jobs it runs at once at most. */
  readonly jobSlots: number;
  /** The event loop's delay over the last minute or so, in milliseconds. */
  readonly eventLoopDelayMs: { readonly p50: number; readonly p99: number; readonly max: number };
}

export interface InstanceRow {
  readonly id: string;
  /** Epoch ms of its last heartbeat (the database's clock on PostgreSQL). */
  readonly heartbeatAt: number;
  /** Null until it has reported (an instance of an earlier version, or one just started). */
  readonly vitals: InstanceVitals | null;
}

export interface InstanceStore {
  /** Where the heartbeat reads what it reports; set once the server has its workers. */
  reportVitals(read: () => InstanceVitals): void;
  /** The instances serving this database whose heartbeat has not lapsed; on SQLite, this process alone. */
  listInstances(): Promise<InstanceRow[]>;
}

export interface Store
  extends LedgerStore,
    DirectoryStore,
    RequestLogStore,
    IdempotencyStore,
    JobStore,
    WebhookStore,
    ChangeFeed,
    ServedModelsStore,
    PeopleStore,
    AuditStore,
    DashboardListStore,
    DashboardViewStore,
    InstanceStore,
    UsageStore {
  readonly engine: 'sqlite' | 'postgres';
  /**
   * This instance, the holder of the reservations it makes: one per server process on SQLite
   * (every handle of a process on one file shares it), one per store on PostgreSQL.
   */
  readonly instanceId: string;
  /**
   * The database's own blob store (PostgreSQL: blob tables), or null where blobs are files (SQLite).
   * open-blobs.ts chooses between it and a folder.
   */
  readonly databaseBlobs: BlobStore | null;
  close(): Promise<void>;
}
