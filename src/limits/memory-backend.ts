/**
 * Counters in this process: exact for one instance, which is what a SQLite file always has (one
 * server per file, storage/sqlite/server-lock.ts) and what PostgreSQL without REDIS_URL is
 * documented to need (docs/limits.md). Everything runs synchronously, so an admission is atomic.
 */
import type { Admission, AdmitRequest, CounterCheck, CounterReport, LimitBackend } from './backend.ts';
import { add, type BucketState, take } from './gcra.ts';

export class MemoryBackend implements LimitBackend {
  readonly kind = 'memory' as const;
  readonly #buckets = new Map<string, BucketState>();
  /** scope → its slots' leases. */
  readonly #leases = new Map<string, Leases>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  admit(request: AdmitRequest): Admission {
    const now = this.#now();
    const updates: [string, BucketState][] = [];
    const reports: CounterReport[] = [];
    const tokenLevels: number[] = [];
    for (const check of request.checks) {
      if (check.requestsPerMinute !== undefined) {
        const key = `rpm:${check.scope}`;
        const verdict = take(this.#buckets.get(key), check.requestsPerMinute, request.requests, now);
        if (!verdict.admitted) return { admitted: false, limit: 'requests_per_minute', holder: check.holder, retryAfterMs: verdict.retryAfterMs };
        if (request.requests > 0) updates.push([key, verdict.state]);
        reports.push({
          limit: 'requests_per_minute',
          holder: check.holder,
          max: check.requestsPerMinute,
          remaining: verdict.remaining,
          resetMs: verdict.resetMs,
        });
      }
      if (check.tokensPerMinute !== undefined) {
        // Reported only: a call's tokens are pre-checked against the level when it is prepared.
        const verdict = take(this.#buckets.get(`tpm:${check.scope}`), check.tokensPerMinute, 0, now, true);
        tokenLevels.push(verdict.state.level);
        reports.push({
          limit: 'tokens_per_minute',
          holder: check.holder,
          max: check.tokensPerMinute,
          remaining: Math.max(0, verdict.remaining),
          resetMs: verdict.resetMs,
        });
      }
      if (check.concurrentRequests !== undefined) {
        const leases = this.#live(check.scope, now);
        if (request.lease && leases.size >= check.concurrentRequests) {
          return { admitted: false, limit: 'concurrent_requests', holder: check.holder, retryAfterMs: 1000 };
        }
        reports.push({
          limit: 'concurrent_requests',
          holder: check.holder,
          max: check.concurrentRequests,
          remaining: Math.max(0, check.concurrentRequests - leases.size - (request.lease ? 1 : 0)),
          resetMs: 0,
        });
      }
    }
    for (const [key, state] of updates) this.#buckets.set(key, state);
    if (request.lease) {
      for (const check of request.checks) {
        if (check.concurrentRequests === undefined) continue;
        this.#leasesOf(check.scope).add(request.lease.id, now + request.lease.ttlMs);
      }
    }
    return { admitted: true, reports, tokenLevels };
  }

  release(scopes: readonly string[], leaseId: string): undefined {
    for (const scope of scopes) {
      const leases = this.#leases.get(scope);
      leases?.expiries.delete(leaseId);
      if (leases?.expiries.size === 0) this.#leases.delete(scope);
    }
  }

  transfer(scopes: readonly string[], from: string, to: string, ttlMs: number): undefined {
    const expiresAt = this.#now() + ttlMs;
    for (const scope of scopes) {
      const leases = this.#leases.get(scope);
      if (!leases?.expiries.delete(from)) continue;
      leases.add(to, expiresAt);
    }
  }

  addTokens(checks: readonly CounterCheck[], tokens: number): undefined {
    const now = this.#now();
    for (const check of checks) {
      if (check.tokensPerMinute === undefined || tokens <= 0) continue;
      const key = `tpm:${check.scope}`;
      this.#buckets.set(key, add(this.#buckets.get(key), check.tokensPerMinute, tokens, now));
    }
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}

  /** The unexpired leases of a scope (an expired one belonged to work that never ended cleanly). */
  #live(scope: string, now: number): ReadonlyMap<string, number> {
    const leases = this.#leases.get(scope);
    if (!leases) return NO_LEASES;
    if (now >= leases.nextExpiry) leases.dropExpired(now);
    return leases.expiries;
  }

  #leasesOf(scope: string): Leases {
    let leases = this.#leases.get(scope);
    if (!leases) this.#leases.set(scope, (leases = new Leases()));
    return leases;
  }
}

const NO_LEASES: ReadonlyMap<string, number> = new Map();

/** The leases of one scope's slots, with the earliest expiry, so that expired ones are looked for only once one is due. */
class Leases {
  /** Lease id → expiry (epoch ms). */
  readonly expiries = new Map<string, number>();
  nextExpiry = Number.POSITIVE_INFINITY;

  add(id: string, expiresAt: number): void {
    this.expiries.set(id, expiresAt);
    if (expiresAt < this.nextExpiry) this.nextExpiry = expiresAt;
  }

  dropExpired(now: number): void {
    this.nextExpiry = Number.POSITIVE_INFINITY;
    for (const [id, expiresAt] of this.expiries) {
      if (expiresAt <= now) this.expiries.delete(id);
      else if (expiresAt < this.nextExpiry) this.nextExpiry = expiresAt;
    }
  }
}
