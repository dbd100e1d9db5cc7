/**
 * The upstream attempts of one request, in the order they were made, for its request log row: the
 * dashboard draws them as a waterfall (docs/dashboard.md, "The request log"). Times are
 * milliseconds from the request's arrival, read from performance.now() like the row's duration.
 */
import type { RouteEndpoint } from '../catalog/types.ts';
import type { GatewayError } from '../core/errors.ts';
import type { AttemptRecord } from '../routing/endpoint-health.ts';
import type { UpstreamAttempt } from '../storage/store.ts';

interface OpenAttempt {
  readonly endpoint: RouteEndpoint;
  readonly startMs: number;
  firstByteMs: number | null;
}

export class AttemptLog {
  readonly #startedAt: number;
  readonly #ended: UpstreamAttempt[] = [];
  #open: OpenAttempt | null = null;

  /** @param startedAt performance.now() at the request's arrival. */
  constructor(startedAt: number) {
    this.#startedAt = startedAt;
  }

  /**
   * An attempt's line, told its outcome like its breaker. A stream's attempt stays open from its
   * first byte to the end of the request (see `finish`); a client gone before the end leaves it so.
   */
  begin(endpoint: RouteEndpoint): AttemptRecord {
    const attempt: OpenAttempt = { endpoint, startMs: this.#elapsed(), firstByteMs: null };
    this.#open = attempt;
    return {
      firstByte: () => {
        attempt.firstByteMs ??= this.#elapsed() - attempt.startMs;
      },
      succeeded: () => this.#end(attempt, { outcome: 'served' }),
      failed: (error: GatewayError) => this.#end(attempt, { outcome: 'failed', status: error.status, errorCode: error.code, message: error.message }),
      abandoned: () => {},
    };
  }

  /** An endpoint passed over because its circuit was open. */
  skipped(endpoint: RouteEndpoint): void {
    this.#ended.push({ ...endpointOf(endpoint), outcome: 'skipped', startMs: this.#elapsed(), reason: 'circuit_open' });
  }

  /**
   * The attempts so far. One still open is a stream that was served from its first byte on and
   * read by the caller until now: it ends now.
   */
  finish(): UpstreamAttempt[] {
    if (this.#open) this.#end(this.#open, { outcome: 'served' });
    return [...this.#ended];
  }

  #end(attempt: OpenAttempt, outcome: { outcome: 'served' } | { outcome: 'failed'; status: number; errorCode: string | null; message: string }): void {
    if (this.#open !== attempt) return;
    this.#open = null;
    const durationMs = Math.round(this.#elapsed() - attempt.startMs);
    const firstByteMs = attempt.firstByteMs === null ? null : Math.round(attempt.firstByteMs);
    const base = { ...endpointOf(attempt.endpoint), startMs: Math.round(attempt.startMs), durationMs, firstByteMs };
    this.#ended.push(outcome.outcome === 'served' ? { ...base, outcome: 'served', firstByteMs: firstByteMs ?? durationMs } : { ...base, ...outcome });
  }

  #elapsed(): number {
    return performance.now() - this.#startedAt;
  }
}

function endpointOf(endpoint: RouteEndpoint) {
  return { provider: endpoint.provider.id, upstreamModel: endpoint.upstreamModel };
}
