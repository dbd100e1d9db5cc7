/**
 * The circuit breaker of one provider endpoint (provider × upstream model), as arithmetic: a
 * failure rate over a sliding window of attempts opens it once the window holds enough attempts;
 * an open breaker skips its endpoint for a cool-down that doubles at each reopening; after it, one
 * probe at a time may go (half-open), and a success closes it again (docs/operations.md,
 * "Circuit breakers"). The same rules run in this process (memory-breakers.ts) and, shared by every
 * instance, in Redis (redis-breakers.ts), whose script follows this file line for line.
 */
import type { GatewayConfig } from '../config/schema.ts';
import type { GatewayError } from '../core/errors.ts';

export interface BreakerSettings {
  /** False: endpoints are always tried in plan order (outcomes are still observed and shown). */
  readonly enabled: boolean;
  readonly windowMs: number;
  readonly minRequests: number;
  readonly failureRatePercent: number;
  readonly cooldownMs: number;
  readonly maxCooldownMs: number;
}

/** Used for what `breakers` in the config leaves out. */
export const BREAKER_DEFAULTS: BreakerSettings = {
  enabled: true,
  windowMs: 30_000,
  minRequests: 10,
  failureRatePercent: 50,
  cooldownMs: 5_000,
  maxCooldownMs: 120_000,
};

export function breakerSettings(config: Pick<GatewayConfig, 'breakers'>): BreakerSettings {
  const breakers = config.breakers ?? {};
  const cooldownMs = breakers.cooldown_ms ?? BREAKER_DEFAULTS.cooldownMs;
  return {
    enabled: breakers.enabled ?? BREAKER_DEFAULTS.enabled,
    windowMs: breakers.window_ms ?? BREAKER_DEFAULTS.windowMs,
    minRequests: breakers.min_requests ?? BREAKER_DEFAULTS.minRequests,
    failureRatePercent: breakers.failure_rate_percent ?? BREAKER_DEFAULTS.failureRatePercent,
    cooldownMs,
    maxCooldownMs: Math.max(cooldownMs, breakers.max_cooldown_ms ?? BREAKER_DEFAULTS.maxCooldownMs),
  };
}

/** The window is kept as this many buckets, each a tenth of it: old attempts leave it a bucket at a time. */
export const WINDOW_BUCKETS = 10;

export type BreakerState = 'closed' | 'open' | 'half_open';

/** What a breaker says about its endpoint at one moment. */
export interface BreakerView {
  readonly state: BreakerState;
  /**
   * Open: how long until a probe may go (0: one may go now). Half-open: how long the probe that
   * went has before another may go. Closed: 0.
   */
  readonly remainingMs: number;
  /** Attempts and failures in the window (closed: since it last closed). */
  readonly requests: number;
  readonly failures: number;
}

export const CLOSED: BreakerView = { state: 'closed', remainingMs: 0, requests: 0, failures: 0 };

/**
 * Whether a failed attempt counts against its endpoint: connect errors, timeouts, 5xx and an
 * unreadable answer (the errors that let routing fall back), and a 429 only with a retry hint —
 * never an error the request itself caused, nor a client that went away.
 */
export function countsAgainstEndpoint(error: GatewayError, cancelled: boolean): boolean {
  if (cancelled || !error.retryable) return false;
  if (error.status === 429) return error.retryAfterSeconds !== undefined;
  return error.status >= 500;
}

/** One endpoint's breaker in this process: the arithmetic above on a clock given by the caller. */
export class BreakerCell {
  #state: BreakerState = 'closed';
  /** Open: when a probe may go. Half-open: when the probe's claim lapses. */
  #until = 0;
  /** Openings since it last closed: the cool-down doubles with each. */
  #opens = 0;
  readonly #epochs = new Array<number>(WINDOW_BUCKETS).fill(Number.NEGATIVE_INFINITY);
  readonly #requests = new Array<number>(WINDOW_BUCKETS).fill(0);
  readonly #failures = new Array<number>(WINDOW_BUCKETS).fill(0);

  record(now: number, failed: boolean, settings: BreakerSettings): BreakerView {
    if (this.#state !== 'closed') {
      // A success (a probe, or the last resort tried while open) shows the endpoint works again;
      // a failed probe reopens it for longer; other failures while open change nothing.
      if (!failed) this.#close();
      else if (this.#state === 'half_open') this.#open(now, settings);
      return this.view(now, settings);
    }
    const width = settings.windowMs / WINDOW_BUCKETS;
    const epoch = Math.floor(now / width);
    const slot = epoch % WINDOW_BUCKETS;
    if (this.#epochs[slot] !== epoch) {
      this.#epochs[slot] = epoch;
      this.#requests[slot] = 0;
      this.#failures[slot] = 0;
    }
    this.#requests[slot]++;
    if (failed) this.#failures[slot]++;
    const { requests, failures } = this.#window(epoch);
    if (failed && requests >= settings.minRequests && failures * 100 >= settings.failureRatePercent * requests) this.#open(now, settings);
    return this.view(now, settings);
  }

  /** Lets one probe go when the cool-down is over (or the last probe's claim lapsed). */
  claimProbe(now: number, settings: BreakerSettings): boolean {
    if (this.#state === 'closed' || now < this.#until) return false;
    this.#state = 'half_open';
    this.#until = now + this.#cooldown(settings);
    return true;
  }

  view(now: number, settings: BreakerSettings): BreakerView {
    const { requests, failures } = this.#window(Math.floor(now / (settings.windowMs / WINDOW_BUCKETS)));
    return { state: this.#state, remainingMs: this.#state === 'closed' ? 0 : Math.max(0, this.#until - now), requests, failures };
  }

  #window(epoch: number): { requests: number; failures: number } {
    let requests = 0;
    let failures = 0;
    for (let slot = 0; slot < WINDOW_BUCKETS; slot++) {
      if (this.#epochs[slot] > epoch - WINDOW_BUCKETS) {
        requests += this.#requests[slot];
        failures += this.#failures[slot];
      }
    }
    return { requests, failures };
  }

  #open(now: number, settings: BreakerSettings): void {
    this.#opens++;
    this.#state = 'open';
    this.#until = now + this.#cooldown(settings);
    this.#epochs.fill(Number.NEGATIVE_INFINITY);
  }

  #close(): void {
    this.#state = 'closed';
    this.#opens = 0;
    this.#until = 0;
    this.#epochs.fill(Number.NEGATIVE_INFINITY);
  }

  /** The current cool-down: doubled at each opening since the last close, up to the maximum. */
  #cooldown(settings: BreakerSettings): number {
    return Math.min(settings.cooldownMs * 2 ** Math.max(0, this.#opens - 1), settings.maxCooldownMs);
  }
}
