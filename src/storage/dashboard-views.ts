/**
 * What the dashboard's request log, jobs and health pages read (docs/dashboard.md): keyset pages
 * of requests and jobs under filters, a request's or job's hold with its settlement, the upstream
 * endpoints' figures over a window, and the ledger's integrity. The SQL is shared by both engines; each runs it with its own placeholders.
 */
import type { Picos } from '../core/money.ts';
import type { Page, PageRequest } from './people.ts';
import type { JobKind, JobRecord, JobStatus, LedgerEntry, OwnerRef, RequestLogRecord, RequestStatus, Reservation } from './store.ts';

export interface RequestFilter {
  /** Only this owner's requests (a member's view), an organization's with its accounts'; every owner's when absent. */
  readonly owner?: OwnerRef;
  /** Created at or after (epoch ms). */
  readonly from?: number;
  /** Created before (epoch ms). */
  readonly to?: number;
  readonly keyId?: string;
  readonly model?: string;
  readonly status?: RequestStatus;
  /** The API route (chat, messages, responses, images.generations, …). */
  readonly route?: string;
  /** The provider endpoint that served it. */
  readonly provider?: string;
  readonly minCost?: Picos;
  readonly maxCost?: Picos;
  readonly requestId?: string;
}

/** A request log row as a list shows it: no output, no provider usage. */
export type RequestLine = Pick<
  RequestLogRecord,
  | 'id'
  | 'owner'
  | 'keyId'
  | 'route'
  | 'model'
  | 'provider'
  | 'status'
  | 'httpStatus'
  | 'inputTokens'
  | 'outputTokens'
  | 'cost'
  | 'errorCode'
  | 'createdAt'
  | 'durationMs'
>;

/** Where a job is in its life: waiting for a worker, worked on, or ended. */
export type JobState = 'queued' | 'running' | 'ended';
export const JOB_STATES: Readonly<Record<JobState, readonly JobStatus[]>> = {
  queued: ['queued'],
  running: ['in_progress'],
  ended: ['completed', 'incomplete', 'failed', 'cancelled'],
};

export interface JobFilter {
  /** As RequestFilter's: an organization's jobs with its accounts'. */
  readonly owner?: OwnerRef;
  readonly kind?: JobKind;
  readonly state?: JobState;
}

/** A job as a list shows it: no payload, result or checkpoint. */
export type JobLine = Pick<JobRecord, 'id' | 'kind' | 'owner' | 'keyId' | 'status' | 'reservationId' | 'createdAt' | 'updatedAt' | 'attempts' | 'cost'>;

/** A hold and what became of it: the charge that settled it (none when released or open). */
export interface HoldView {
  readonly reservation: Reservation;
  readonly charges: readonly LedgerEntry[];
}

/**
 * One wallet against its ledger: the sum of its credits less its charges is its balance, and its
 * open reservations add up to what it holds. Any difference is a fault (there must never be one).
 */
export interface WalletCheck {
  readonly owner: OwnerRef;
  readonly credits: Picos;
  readonly charges: Picos;
  readonly openHolds: Picos;
  readonly balance: Picos;
  readonly reserved: Picos;
  /** (credits − charges − open holds) − (balance − reserved): 0 on a consistent ledger. */
  readonly difference: Picos;
}

export interface OperationsCounts {
  /** Webhook deliveries that gave up, and pending ones whose last attempt failed. */
  readonly failedWebhookDeliveries: number;
  readonly retryingWebhookDeliveries: number;
  /** Jobs by state (ended ones are not counted). */
  readonly queuedJobs: number;
  readonly runningJobs: number;
}

/** Nearest-rank percentiles of an endpoint's attempts, in milliseconds. */
export interface Percentiles {
  readonly p50: number;
  readonly p95: number;
}

/** One upstream endpoint's attempts over a window, as the request rows of every instance recorded them. */
export interface EndpointFigures {
  /** `<provider>:<upstream model>`, the key the breakers use. */
  readonly endpoint: string;
  /** Calls made (an attempt skipped by an open circuit made none). */
  readonly attempts: number;
  readonly failures: number;
  readonly latencyMs: Percentiles;
  /** Null when no attempt reached its first byte. */
  readonly firstByteMs: Percentiles | null;
}

export interface DashboardViewStore {
  /** Requests newest first under a filter. */
  pageRequests(filter: RequestFilter, page: PageRequest): Promise<Page<RequestLine>>;
  /** The hold a request made (found by its request id) or a job runs on (by its reservation id). */
  holdOf(ref: { readonly requestId: string } | { readonly reservationId: string }): Promise<HoldView | null>;
  /** Jobs newest first under a filter. */
  pageJobs(filter: JobFilter, page: PageRequest): Promise<Page<JobLine>>;
  /** Every wallet checked against its ledger entries and open reservations, those with a difference first. */
  ledgerIntegrity(): Promise<WalletCheck[]>;
  operationsCounts(since: number): Promise<OperationsCounts>;
  /** Each upstream endpoint's attempts of the requests made in [from, to), read from their rows' `attempts`. */
  endpointFigures(from: number, to: number): Promise<EndpointFigures[]>;
}
