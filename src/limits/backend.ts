/**
 * Where the counters of per-minute and concurrency limits live (docs/limits.md): in this process
 * (memory-backend.ts) when one instance serves a database, or in Redis shared by
 * every instance. Each admission is one atomic step over every counter it touches, so two checks
 * (a key's and its organization's, requests and concurrency) are passed or refused together.
 *
 * Counters in this process answer at once (a value); counters in Redis later (a promise), so that a
 * limited request with in-process counters awaits nothing.
 */
import type { LimitName } from '../core/errors.ts';

/** The counted limits of one holder (a key or an organization), under the counters' name `scope`. */
export interface CounterCheck {
  /** Names the holder's counters, e.g. `key:key_…`; unique across holders. */
  readonly scope: string;
  readonly holder: 'key' | 'organization';
  readonly requestsPerMinute?: number;
  readonly tokensPerMinute?: number;
  readonly concurrentRequests?: number;
}

export interface AdmitRequest {
  readonly checks: readonly CounterCheck[];
  /** Requests counted against requests_per_minute: 1 for a request, 0 to read the counters only. */
  readonly requests: 0 | 1;
  /** The lease a concurrent-requests slot is taken under; none when no slot is wanted. */
  readonly lease?: { readonly id: string; readonly ttlMs: number };
}

/**
 * Where one counter stands after an admission (for the rate-limit headers and the admin API's
 * usage). A request that counts no request (`requests: 0`) reports the requests counter as it is.
 */
export interface CounterReport {
  readonly limit: 'requests_per_minute' | 'tokens_per_minute' | 'concurrent_requests';
  readonly holder: 'key' | 'organization';
  readonly max: number;
  /** Whole units free now; for concurrent requests, the free slots. */
  readonly remaining: number;
  /** Milliseconds until the bucket is empty; 0 for concurrent requests. */
  readonly resetMs: number;
}

/** An answer now (counters in this process) or later (in Redis). */
export type Answer<T> = T | Promise<T>;

/** Work done already (undefined), or a promise that settles when it is (and rejects when it failed). */
export type Done = Promise<unknown> | undefined;

export type Admission =
  | {
      readonly admitted: true;
      readonly reports: readonly CounterReport[];
      /**
       * The level (unit·ms, gcra.ts) of each check's tokens_per_minute bucket as the request found it,
       * in the order of the checks that have one: the call's tokens are pre-checked against these
       * (limiter.ts, checkTokens). Reading takes nothing, so comparing with them is the same test as
       * making it where the counters are kept, at the admission's instant.
       */
      readonly tokenLevels: readonly number[];
    }
  | { readonly admitted: false; readonly limit: LimitName; readonly holder: 'key' | 'organization'; readonly retryAfterMs: number };

export interface LimitBackend {
  /** The kind named in logs and metrics. */
  readonly kind: 'memory' | 'redis';
  /** Checks every counter of every check and, only when all pass, counts the request and takes the slot. */
  admit(request: AdmitRequest): Answer<Admission>;
  /** Frees the concurrent-requests slots a lease took. */
  release(scopes: readonly string[], leaseId: string): Done;
  /** Moves the slots a lease took to another lease (a request's slot to its background job), with a new lifetime. */
  transfer(scopes: readonly string[], from: string, to: string, ttlMs: number): Done;
  /** Counts tokens actually used (at settlement) against each check's tokens_per_minute. */
  addTokens(checks: readonly CounterCheck[], tokens: number): Done;
  /** One round trip to where the counters live (the dashboard's health page times it). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
