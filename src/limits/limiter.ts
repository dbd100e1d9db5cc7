/**
 * The counted limits of a request (docs/limits.md): requests per minute and concurrent requests
 * when a keyed request arrives (server/app.ts), tokens per minute when a metered call is prepared
 * and settled (pipeline/pipeline.ts). Spend limits are not counted here: they are the ledger's,
 * checked atomically with the credit hold (storage, `reserve`).
 *
 * A key without counted limits costs one WeakMap lookup and no promise; a limited key with the
 * counters in this process awaits nothing either. When the backend fails (Redis unreachable),
 * `rate_limits.on_backend_failure` decides: `open` admits the request with a warning in the log and
 * a metric, `closed` answers 503 `limits_unavailable`.
 */
import type { Logger } from '../core/logger.ts';
import { Counter, type Registry } from 'prom-client';
import type { AuthContext } from '../auth/context.ts';
import { errors } from '../core/errors.ts';
import { randomToken } from '../core/ids.ts';
import type { KeyLimits } from '../storage/store.ts';
import type { Admission, Answer, CounterCheck, CounterReport, LimitBackend } from './backend.ts';
import { resetText, retryAfterSeconds, waitFor } from './gcra.ts';

export type BackendFailureMode = 'open' | 'closed';

export interface LimiterOptions {
  readonly onBackendFailure: BackendFailureMode;
  /** How long a concurrent-requests slot outlives an instance that died holding it. */
  readonly leaseTtlMs: number;
  readonly logger: Logger;
  readonly metrics: Registry;
}

/** An admitted request's side of its limits: the headers to send, and the slot to free at its end. */
export interface LimitTicket {
  readonly headers: readonly (readonly [string, string])[];
  /** What the admission found of the key's tokens-per-minute buckets (Admission.tokenLevels); undefined when not counted. */
  readonly tokenLevels: readonly number[] | undefined;
  /** Frees the concurrent-requests slot (idempotent). */
  release(): void;
  /**
   * Hands the slot to a background job the request queued (docs/jobs.md): it is then held until
   * `releaseJob` (the job's end, on any instance) or for `ttlMs`, and `release` does nothing.
   */
  handOver(jobId: string, ttlMs: number): Promise<void>;
}

/** What a call's tokens are pre-checked with (tokens/estimate.ts, PromptSize). */
export interface TokenEstimate {
  /** An upper bound of `tokens`, free to compute. */
  readonly bound: number;
  /** The local tokenizer's estimate, computed when read. */
  readonly tokens: number;
}

/** The header family of each per-minute limit (https://platform.openai.com/docs/guides/rate-limits). */
const HEADER_NAMES = {
  requests: ['x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests'],
  tokens: ['x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens'],
} as const;

/** Where a holder's counters stand, for the admin API (what it shows under `usage`). */
export interface CounterUsage {
  readonly limit: CounterReport['limit'];
  readonly max: number;
  readonly remaining: number;
  readonly resetSeconds: number;
}

/** How often, at most, a failing backend is logged. */
const FAILURE_LOG_INTERVAL_MS = 10_000;

const NO_CHECKS: readonly CounterCheck[] = [];
const NO_TICKET: LimitTicket = { headers: [], tokenLevels: undefined, release() {}, handOver: async () => {} };

/** What the limiter keeps per auth context: its counted checks, and those it frees slots of. */
interface Counted {
  readonly checks: readonly CounterCheck[];
  /** The scopes of the checks with concurrent_requests (a slot is taken under a lease when any). */
  readonly slotScopes: readonly string[];
  /** The checks with tokens_per_minute; undefined when none. */
  readonly tokenChecks: readonly CounterCheck[] | undefined;
}

const NOT_COUNTED: Counted = { checks: NO_CHECKS, slotScopes: [], tokenChecks: undefined };

export class Limiter {
  readonly #backend: LimitBackend;
  readonly #options: LimiterOptions;
  /** Auth contexts are cached per key and replaced when an admin change lands, so this follows them. */
  readonly #counted = new WeakMap<AuthContext, Counted>();
  readonly #refusals: Counter<'limit'>;
  readonly #failures: Counter;
  /** Lease ids are this instance's random prefix and a sequence number: unique without a random draw each. */
  readonly #leasePrefix = `${randomToken(9)}.`;
  #leases = 0;
  #lastFailureLog = 0;
  readonly #failed = (error: unknown): void => this.#backendFailed(error);

  constructor(backend: LimitBackend, options: LimiterOptions) {
    this.#backend = backend;
    this.#options = options;
    this.#refusals = new Counter({
      name: 'gateway_limit_refusals_total',
      help: 'Requests refused with 429 by a key or organization limit, by limit.',
      labelNames: ['limit'],
      registers: [options.metrics],
    });
    this.#failures = new Counter({
      name: 'gateway_limit_backend_failures_total',
      help: 'Limit checks the counters backend (Redis) failed to answer; the request was admitted (fail open) or refused with 503 (fail closed).',
      registers: [options.metrics],
    });
  }

  get backend(): LimitBackend {
    return this.#backend;
  }

  /** The counters of a request's key (and organization), none for most keys. */
  checksOf(auth: AuthContext): readonly CounterCheck[] {
    return this.#countedOf(auth).checks;
  }

  /**
   * Counts an arriving request and takes a concurrent-requests slot; undefined when nothing is
   * counted for its key, a ticket at once when the counters are in this process. Throws (or
   * rejects) with a 429 naming the limit.
   */
  admit(auth: AuthContext): Answer<LimitTicket> | undefined {
    const counted = this.#countedOf(auth);
    if (counted.checks.length === 0) return undefined;
    const lease = counted.slotScopes.length > 0 ? { id: `${this.#leasePrefix}${++this.#leases}`, ttlMs: this.#options.leaseTtlMs } : undefined;
    const answer = this.#backend.admit({ checks: counted.checks, requests: 1, lease });
    if (!(answer instanceof Promise)) return this.#ticket(answer, counted, lease?.id);
    return answer.then(
      (admission) => this.#ticket(admission, counted, lease?.id),
      (error) => this.#unanswered(error, NO_TICKET),
    );
  }

  /** The counters of a key's tokens per minute; undefined when it has none. */
  tokenChecksOf(auth: AuthContext): readonly CounterCheck[] | undefined {
    return this.#countedOf(auth).tokenChecks;
  }

  /**
   * Pre-checks a call's estimated tokens against tokens_per_minute, taking none: throws a 429 when
   * they do not fit the buckets as the request's admission found them (`levels`). The bound is
   * never below the estimate: when the bound fits, so does the estimate, and the prompt is not
   * tokenized (most calls); otherwise the estimate decides.
   */
  checkTokens(checks: readonly CounterCheck[], levels: readonly number[], estimate: TokenEstimate): void {
    if (checks.every((check, index) => waitFor(levels[index], check.tokensPerMinute!, estimate.bound) === 0)) return;
    const tokens = estimate.tokens;
    checks.forEach((check, index) => {
      const waitMs = waitFor(levels[index], check.tokensPerMinute!, tokens);
      if (waitMs > 0) this.#refused({ admitted: false, limit: 'tokens_per_minute', holder: check.holder, retryAfterMs: waitMs });
    });
  }

  /** Counts the tokens a settled call used; never fails the call (a backend failure is logged and counted). */
  countTokens(checks: readonly CounterCheck[], tokens: number): void {
    if (tokens <= 0) return;
    this.#backend.addTokens(checks, tokens)?.catch(this.#failed);
  }

  /** Frees the concurrent-requests slot a background job holds (see LimitTicket.handOver). */
  releaseJob(job: { readonly id: string; readonly keyId: string; readonly owner: { readonly id: string } }): void {
    this.#backend.release([`key:${job.keyId}`, `org:${job.owner.id}`], job.id)?.catch(this.#failed);
  }

  /** Where a key's (or an organization's) counters stand, counting nothing; empty without counted limits. */
  async usage(scope: 'key' | 'organization', id: string, limits: KeyLimits | null): Promise<CounterUsage[]> {
    const check = counterCheck(`${scope === 'key' ? 'key' : 'org'}:${id}`, scope, limits);
    if (!check) return [];
    const admission = await this.#backend.admit({ checks: [check], requests: 0 });
    if (!admission.admitted) return [];
    return admission.reports.map((report) => ({
      limit: report.limit,
      max: report.max,
      remaining: Math.max(0, report.remaining),
      resetSeconds: Math.ceil(report.resetMs / 1000),
    }));
  }

  close(): Promise<void> {
    return this.#backend.close();
  }

  #countedOf(auth: AuthContext): Counted {
    let counted = this.#counted.get(auth);
    if (counted === undefined) {
      const checks = countedChecks(auth);
      const tokenChecks = checks.filter((check) => check.tokensPerMinute !== undefined);
      counted =
        checks.length === 0
          ? NOT_COUNTED
          : {
              checks,
              slotScopes: checks.filter((check) => check.concurrentRequests !== undefined).map((check) => check.scope),
              tokenChecks: tokenChecks.length === 0 ? undefined : tokenChecks,
            };
      this.#counted.set(auth, counted);
    }
    return counted;
  }

  /** The ticket of an admitted request; throws the 429 of a refused one. */
  #ticket(admission: Admission, counted: Counted, leaseId: string | undefined): LimitTicket {
    if (!admission.admitted) return this.#refused(admission);
    const headers = headersOf(admission.reports);
    const tokenLevels = admission.tokenLevels;
    if (leaseId === undefined) return { headers, tokenLevels, release: NO_TICKET.release, handOver: NO_TICKET.handOver };
    let released = false;
    return {
      headers,
      tokenLevels,
      release: () => {
        if (released) return;
        released = true;
        this.#backend.release(counted.slotScopes, leaseId)?.catch(this.#failed);
      },
      handOver: async (jobId, ttlMs) => {
        if (released) return;
        released = true;
        await this.#backend.transfer(counted.slotScopes, leaseId, jobId, ttlMs)?.catch(this.#failed);
      },
    };
  }

  /** What a request gets when the backend did not answer: `admitted` when the mode is `open`, else a 503. */
  #unanswered<T>(error: unknown, admitted: T): T {
    this.#backendFailed(error);
    if (this.#options.onBackendFailure === 'closed') throw errors.limitsUnavailable(error);
    return admitted;
  }

  #refused(refusal: Extract<Admission, { admitted: false }>): never {
    this.#refusals.inc({ limit: refusal.limit });
    throw errors.limitExceeded(refusal.limit, refusal.holder, retryAfterSeconds(refusal.retryAfterMs));
  }

  #backendFailed(error: unknown): void {
    this.#failures.inc();
    const now = Date.now();
    if (now - this.#lastFailureLog < FAILURE_LOG_INTERVAL_MS) return;
    this.#lastFailureLog = now;
    this.#options.logger.warn(
      { err: error, backend: this.#backend.kind, mode: this.#options.onBackendFailure },
      this.#options.onBackendFailure === 'open'
        ? 'limit counters unavailable: requests are admitted without their counted limits'
        : 'limit counters unavailable: requests of limited keys are refused',
    );
  }
}

/** The counted limits of a key and of the organization that owns it (spend limits are the ledger's). */
export function countedChecks(auth: AuthContext): readonly CounterCheck[] {
  const key = counterCheck(`key:${auth.key.id}`, 'key', auth.key.limits);
  const organization = counterCheck(`org:${auth.owner.id}`, 'organization', auth.organizationLimits);
  if (!key && !organization) return NO_CHECKS;
  return [key, organization].filter((check): check is CounterCheck => check !== undefined);
}

function counterCheck(scope: string, holder: CounterCheck['holder'], limits: KeyLimits | null): CounterCheck | undefined {
  if (!limits) return undefined;
  const { requests_per_minute, tokens_per_minute, concurrent_requests } = limits;
  if (requests_per_minute === undefined && tokens_per_minute === undefined && concurrent_requests === undefined) return undefined;
  return {
    scope,
    holder,
    requestsPerMinute: requests_per_minute,
    tokensPerMinute: tokens_per_minute,
    concurrentRequests: concurrent_requests,
  };
}

/** The rate-limit headers of the tightest counter of each family. */
export function headersOf(reports: readonly CounterReport[]): [string, string][] {
  let requests: CounterReport | undefined;
  let tokens: CounterReport | undefined;
  for (const report of reports) {
    if (report.limit === 'requests_per_minute') {
      if (!requests || report.remaining < requests.remaining) requests = report;
    } else if (report.limit === 'tokens_per_minute') {
      if (!tokens || report.remaining < tokens.remaining) tokens = report;
    }
  }
  const headers: [string, string][] = [];
  if (requests) pushHeaders(headers, HEADER_NAMES.requests, requests);
  if (tokens) pushHeaders(headers, HEADER_NAMES.tokens, tokens);
  return headers;
}

function pushHeaders(headers: [string, string][], [limit, remaining, reset]: (typeof HEADER_NAMES)[keyof typeof HEADER_NAMES], report: CounterReport): void {
  headers.push([limit, String(report.max)], [remaining, String(Math.max(0, report.remaining))], [reset, resetText(report.resetMs)]);
}
