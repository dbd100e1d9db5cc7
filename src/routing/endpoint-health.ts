/**
 * Health-aware routing (docs/operations.md, "Circuit breakers"): what this instance knows of each
 * provider endpoint's breaker, how an attempt plan is reordered by it, whether an attempt may go,
 * and the record of every attempt's outcome (the breaker's count, this instance's latencies,
 * first-byte times, throughputs and last error).
 *
 * Routing reads the breakers synchronously, from what the backend last answered: in this process
 * that is the breaker itself; with Redis it is refreshed by the answers to this instance's own
 * attempts and by a read of every endpoint each `refreshMs`. Only a probe asks the backend before
 * its attempt, so a healthy request awaits nothing here.
 */
import type { Logger } from '../core/logger.ts';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { RouteEndpoint } from '../catalog/types.ts';
import type { GatewayConfig } from '../config/schema.ts';
import type { GatewayError } from '../core/errors.ts';
import { type BreakerSettings, type BreakerView, CLOSED, countsAgainstEndpoint } from './breaker.ts';
import type { BreakerBackend } from './breaker-backend.ts';
import { EndpointStats } from './endpoint-stats.ts';

/** How often an instance reads the shared breakers of every endpoint (Redis only). */
const DEFAULT_REFRESH_MS = 1_000;

/** Samples an endpoint needs before `provider.sort` trusts what was observed over the configured figure. */
export const MIN_SORT_SAMPLES = 20;

/** One endpoint as GET /admin/v1/endpoints and `gateway endpoints` show it. */
export interface EndpointReport {
  readonly key: string;
  readonly provider: string;
  readonly model: string;
  readonly view: BreakerView;
  readonly stats: EndpointStats;
}

/** The outcome of one attempt, told once. */
export interface AttemptRecord {
  /** The first event of a stream arrived. */
  firstByte(): void;
  /** The attempt answered in full; `outputTokens` for a stream's throughput. */
  succeeded(outputTokens?: number): void;
  /** It failed; `cancelled` when the client went away (no fault of the endpoint). */
  failed(error: GatewayError, cancelled: boolean): void;
  /** The client went away before the end: no verdict on the endpoint. */
  abandoned(): void;
}

interface KnownView {
  readonly view: BreakerView;
  /** When it was read (epoch ms): its remaining time runs from there. */
  readonly readAt: number;
}

export interface EndpointHealthOptions {
  readonly settings: BreakerSettings;
  readonly backend: BreakerBackend;
  /** Every endpoint key of the config (`<provider>:<upstream model>`), reported even before its first attempt. */
  readonly endpoints: readonly string[];
  readonly logger: Logger;
  readonly metrics: Registry;
  readonly now?: () => number;
  readonly refreshMs?: number;
}

export class EndpointHealth {
  readonly #settings: BreakerSettings;
  readonly #backend: BreakerBackend;
  readonly #endpoints: readonly string[];
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #views = new Map<string, KnownView>();
  readonly #stats = new Map<string, EndpointStats>();
  readonly #attempts: Counter<'endpoint' | 'outcome'>;
  readonly #attemptSeries = new Map<string, Counter.Internal>();
  readonly #transitions: Counter<'endpoint' | 'state'>;
  #refresh: NodeJS.Timeout | undefined;
  /** Endpoints whose breaker is not closed, as last known: while there is none, plans are kept as they are. */
  #unhealthy = 0;

  constructor(options: EndpointHealthOptions) {
    this.#settings = options.settings;
    this.#backend = options.backend;
    this.#endpoints = [...new Set(options.endpoints)];
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    this.#attempts = new Counter({
      name: 'gateway_upstream_attempts_total',
      help: 'Upstream attempts by endpoint (provider:model) and outcome: success, failure (counted by its breaker), or other (a client error, a cancellation).',
      labelNames: ['endpoint', 'outcome'],
      registers: [options.metrics],
    });
    this.#transitions = new Counter({
      name: 'gateway_breaker_transitions_total',
      help: "Changes of an endpoint's breaker seen by this instance, by the state entered (open, half_open, closed).",
      labelNames: ['endpoint', 'state'],
      registers: [options.metrics],
    });
    const health = this;
    new Gauge({
      name: 'gateway_breaker_state',
      help: "Each endpoint's breaker as this instance knows it: 0 closed, 1 open, 2 half-open.",
      labelNames: ['endpoint'],
      registers: [options.metrics],
      collect() {
        for (const key of health.#endpoints) this.set({ endpoint: key }, STATE_VALUES[health.#known(key).state]);
      },
    });
    if (this.#backend.kind === 'redis') {
      this.#refresh = setInterval(() => void this.refresh(), options.refreshMs ?? DEFAULT_REFRESH_MS);
      this.#refresh.unref();
    }
  }

  get settings(): BreakerSettings {
    return this.#settings;
  }

  /**
   * The plan with the endpoints whose breaker is open and cooling moved to its end, in their order:
   * they are tried only after every other (and so still tried when nothing else is left).
   */
  order(attempts: readonly RouteEndpoint[]): readonly RouteEndpoint[] {
    if (!this.#settings.enabled || this.#unhealthy === 0 || attempts.length < 2) return attempts;
    const ready: RouteEndpoint[] = [];
    const cooling: RouteEndpoint[] = [];
    for (const endpoint of attempts) (this.#cooling(endpoint.key) ? cooling : ready).push(endpoint);
    return cooling.length === 0 ? attempts : [...ready, ...cooling];
  }

  /**
   * Whether an attempt may go to the endpoint now, when others remain after it: yes while its
   * breaker is closed; when open, only as the probe of a finished cool-down (asked of the backend,
   * which lets one through at a time across instances).
   */
  admit(endpoint: RouteEndpoint): boolean | Promise<boolean> {
    if (!this.#settings.enabled) return true;
    const known = this.#known(endpoint.key);
    if (known.state === 'closed') return true;
    if (this.#remaining(endpoint.key) > 0) return false;
    return this.#backend.claimProbe(endpoint.key).then(
      (claim) => {
        this.#learn(endpoint.key, claim.view);
        return claim.granted;
      },
      (error: unknown) => {
        this.#logger.warn({ err: error, endpoint: endpoint.key }, 'breaker probe claim failed; the endpoint is skipped');
        return false;
      },
    );
  }

  /** Starts the record of one attempt at the endpoint. */
  begin(endpoint: RouteEndpoint): AttemptRecord {
    const started = performance.now();
    let firstByteAt: number | undefined;
    let told = false;
    const stats = this.#statsOf(endpoint.key);
    return {
      firstByte: () => {
        firstByteAt ??= performance.now();
        stats.firstByteMs.add(firstByteAt - started);
      },
      succeeded: (outputTokens) => {
        if (told) return;
        told = true;
        const ended = performance.now();
        stats.latencyMs.add(ended - started);
        if (firstByteAt === undefined) stats.firstByteMs.add(ended - started);
        else if (outputTokens !== undefined && outputTokens > 0 && ended > firstByteAt) stats.throughputTps.add(outputTokens / ((ended - firstByteAt) / 1000));
        stats.succeeded++;
        this.#countAttempt(endpoint.key, 'success');
        this.#record(endpoint.key, false);
      },
      failed: (error, cancelled) => {
        if (told) return;
        told = true;
        if (!countsAgainstEndpoint(error, cancelled)) {
          this.#countAttempt(endpoint.key, 'other');
          return;
        }
        stats.failed++;
        stats.lastError = { code: error.code, message: error.message, at: this.#now() };
        this.#countAttempt(endpoint.key, 'failure');
        this.#record(endpoint.key, true);
      },
      abandoned: () => {
        if (told) return;
        told = true;
        this.#countAttempt(endpoint.key, 'other');
      },
    };
  }

  /** Observed figures for `provider.sort`, once there are enough samples. */
  observed(endpoint: RouteEndpoint): { readonly latencyMs?: number; readonly throughputTps?: number } {
    const stats = this.#stats.get(endpoint.key);
    if (stats === undefined) return {};
    const latency = stats.firstByteMs.size >= MIN_SORT_SAMPLES ? stats.firstByteMs.percentiles([50])?.[0] : undefined;
    const throughput = stats.throughputTps.size >= MIN_SORT_SAMPLES ? stats.throughputTps.percentiles([50])?.[0] : undefined;
    return { ...(latency !== undefined && { latencyMs: latency }), ...(throughput !== undefined && { throughputTps: throughput }) };
  }

  /** Every endpoint of the config with its breaker (read afresh) and what this instance observed. */
  async report(): Promise<EndpointReport[]> {
    await this.refresh();
    return this.#endpoints.map((key) => {
      const separator = key.indexOf(':');
      const known = this.#views.get(key);
      const view = known ? { ...known.view, remainingMs: this.#remaining(key) } : CLOSED;
      return { key, provider: key.slice(0, separator), model: key.slice(separator + 1), view, stats: this.#statsOf(key) };
    });
  }

  /** Reads every endpoint's breaker from the backend; a failure keeps what was known. */
  async refresh(): Promise<void> {
    try {
      const views = await this.#backend.read(this.#endpoints);
      this.#endpoints.forEach((key, index) => this.#learn(key, views[index]));
    } catch (error) {
      this.#logger.warn({ err: error }, 'endpoint breakers could not be read; routing keeps what it last knew');
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#refresh);
    await this.#backend.close();
  }

  /** The counter's series of one endpoint and outcome, found once (prom-client hashes a label object on every call otherwise). */
  #countAttempt(key: string, outcome: 'success' | 'failure' | 'other'): void {
    const name = `${key} ${outcome}`;
    let series = this.#attemptSeries.get(name);
    if (series === undefined) {
      series = this.#attempts.labels({ endpoint: key, outcome });
      this.#attemptSeries.set(name, series);
    }
    series.inc();
  }

  #record(key: string, failed: boolean): void {
    this.#backend.record(key, failed).then(
      (view) => this.#learn(key, view),
      (error: unknown) => this.#logger.warn({ err: error, endpoint: key }, 'an attempt could not be counted by its breaker'),
    );
  }

  #learn(key: string, view: BreakerView): void {
    const before = this.#known(key).state;
    this.#views.set(key, { view, readAt: this.#now() });
    if (before === view.state) return;
    this.#unhealthy += (view.state === 'closed' ? -1 : 0) + (before === 'closed' ? 1 : 0);
    this.#transitions.inc({ endpoint: key, state: view.state });
    const log = { endpoint: key, state: view.state, requests: view.requests, failures: view.failures, remainingMs: view.remainingMs };
    if (view.state === 'open') this.#logger.warn(log, 'endpoint breaker opened: the endpoint is skipped while others remain');
    else this.#logger.info(log, `endpoint breaker ${view.state === 'closed' ? 'closed' : 'half-open'}`);
  }

  #known(key: string): BreakerView {
    return this.#views.get(key)?.view ?? CLOSED;
  }

  #remaining(key: string): number {
    const known = this.#views.get(key);
    return known === undefined ? 0 : Math.max(0, known.view.remainingMs - (this.#now() - known.readAt));
  }

  /** Open with time left, or half-open with its probe out: not to be tried while others remain. */
  #cooling(key: string): boolean {
    return this.#known(key).state !== 'closed' && this.#remaining(key) > 0;
  }

  #statsOf(key: string): EndpointStats {
    let stats = this.#stats.get(key);
    if (stats === undefined) {
      stats = new EndpointStats();
      this.#stats.set(key, stats);
    }
    return stats;
  }
}

const STATE_VALUES = { closed: 0, open: 1, half_open: 2 } as const;

/** Every endpoint key of a config: one breaker per provider × upstream model. */
export function endpointKeys(config: Pick<GatewayConfig, 'models'>): string[] {
  return config.models.flatMap((model) => model.endpoints.map((endpoint) => `${endpoint.provider}:${endpoint.model}`));
}
