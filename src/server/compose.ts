/**
 * Assembles a running gateway from settings: store, catalog, authenticator, the app and its
 * listener. `npm start`, `gateway serve` and the test helper all go through here, so what the
 * tests run is what operators run.
 */
import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import { Registry } from 'prom-client';
import { createAuthenticator, type GatewayAuthenticator } from '../auth/authenticator.ts';
import { instanceLapseMs, reservationTtlMs } from '../billing/credit.ts';
import type { LimitBackend } from '../limits/backend.ts';
import { Limiter } from '../limits/limiter.ts';
import { limitAdmission } from '../http/limits.ts';
import { MemoryBackend } from '../limits/memory-backend.ts';
import { AccessLog } from '../http/access-log.ts';
import { CUT_BACKSTOP_MS, Drain } from '../http/drain.ts';
import { breakerSettings } from '../routing/breaker.ts';
import type { BreakerBackend } from '../routing/breaker-backend.ts';
import { EndpointHealth, endpointKeys } from '../routing/endpoint-health.ts';
import { MemoryBreakers } from '../routing/memory-breakers.ts';
import { instanceVitals } from './instance-vitals.ts';
import type { RedisBackendOptions } from '../limits/redis-backend.ts';
import { buildCatalog } from '../catalog/catalog.ts';
import type { Catalog } from '../catalog/types.ts';
import { nameIndex } from '../config/aliases.ts';
import { missingCredentials } from '../config/credentials.ts';
import type { GatewayConfig } from '../config/schema.ts';
import { parseRateMultiplier } from '../core/money.ts';
import { Jobs } from '../jobs/jobs.ts';
import { jobSettings } from '../jobs/settings.ts';
import { callableRoute } from '../protocols/registry.ts';
import { Outputs } from '../outputs/outputs.ts';
import { REQUEST_LOG_LIFETIME_MS } from '../pipeline/request-log.ts';
import { loadOutputSecret } from '../outputs/secret.ts';
import { openBlobStore } from '../storage/open-blobs.ts';
import { startMaintenance } from '../storage/maintenance.ts';
import { openStore } from '../storage/open-store.ts';
import type { Store } from '../storage/store.ts';
import type { Resolver } from '../webhooks/addresses.ts';
import { startWebhookDispatcher } from '../webhooks/dispatcher.ts';
import { webhookSettings } from '../webhooks/settings.ts';
import { buildApp } from './app.ts';
import type { ServerLimits } from './server-limits.ts';
import type { RouteModule } from '../http/route-module.ts';
import type { AppDeps } from '../http/deps.ts';
import { ALL_ROUTES } from './routes.ts';
import type { StorageSettings } from './settings.ts';
import type { Tracing } from '../telemetry/tracing.ts';
import type { StreamDecoding } from '../protocols/protocol.ts';

export interface RuntimeOptions {
  readonly config: GatewayConfig;
  readonly storage: StorageSettings & {
    /** PostgreSQL schema to use (tests isolate themselves in a fresh one). */
    readonly schema?: string;
  };
  readonly adminKey?: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  /** Defaults to every route of the service. */
  readonly routes?: readonly RouteModule[];
  /** Change-feed polling interval of the key cache (ms). */
  readonly pollIntervalMs?: number;
  /** How often expired reservations, request rows, idempotency records, jobs, webhook deliveries and output files are swept (ms). */
  readonly maintenanceIntervalMs?: number;
  /** Let in-flight requests finish on close (see BuildAppOptions.drainOnClose). */
  readonly drainOnClose?: boolean;
  /** See BuildAppOptions.requestTimeoutMs. */
  readonly requestTimeoutMs?: number;
  /** See BuildAppOptions.limits. */
  readonly serverLimits?: Partial<ServerLimits>;
  /** How long close() lets running background jobs finish before it ends them as failed (ms). */
  readonly jobDrainMs?: number;
  readonly now?: () => number;
  /** The secret of signed output URLs (GATEWAY_OUTPUT_SECRET); undefined: the data dir's (outputs/secret.ts). */
  readonly outputSecret?: string;
  /** The origin of signed output URLs (GATEWAY_PUBLIC_URL); undefined: each request's own. */
  readonly publicUrl?: string;
  /** Replaces DNS for webhook deliveries (tests). */
  readonly webhookResolver?: Resolver;
  /** How upstream streams' text deltas are read (GATEWAY_STREAM_DECODING); `templates` when omitted. */
  readonly streamDecoding?: StreamDecoding;
  /** Keeps the counted limits in Redis (REDIS_URL), shared by every instance; in the process otherwise. */
  readonly redis?: RedisBackendOptions;
  /** Spans of requests, jobs and upstream attempts (telemetry/load.ts); none when undefined. */
  readonly tracing?: Tracing;
}

export interface GatewayRuntime {
  readonly app: FastifyInstance;
  readonly deps: AppDeps;
  readonly store: Store;
  /** Starts accepting connections; resolves to the base URL (`http://127.0.0.1:8080`). */
  listen(host: string, port: number): Promise<string>;
  /** Stops accepting, finishes in-flight requests, stops timers and closes the store. Idempotent. */
  close(): Promise<void>;
  /**
   * The graceful stop of a server (docs/operations.md, "Graceful drain"): health turns to
   * `draining` and new requests are refused; resumable jobs are handed back, in-flight requests,
   * streams and other jobs get until `deadlineMs`, when the remaining streams are cut (as by
   * `cutStreams`); then close().
   */
  drain(deadlineMs: number): Promise<void>;
  /** Ends the remaining streams now, each with an in-stream error, settled for what it delivered. */
  cutStreams(): void;
}

const DEFAULT_MAINTENANCE_INTERVAL_MS = 30_000;
const DEFAULT_JOB_DRAIN_MS = 10_000;

/**
 * JSON lines (pino) on stdout; in a terminal, the same lines made readable by pino-pretty, in a
 * worker thread (https://github.com/pinojs/pino-pretty#usage-with-pino-transports).
 */
export function createLogger(level: string, terminal = false): Logger {
  if (terminal) return pino({ level, base: undefined, transport: { target: 'pino-pretty', options: { destination: 1 } } });
  return pino({ level, base: undefined });
}

/** The shared dependencies every route module receives. */
export function createDeps(input: {
  readonly config: GatewayConfig;
  readonly store: Store;
  readonly catalog: Catalog;
  readonly logger: Logger;
  readonly authenticator: GatewayAuthenticator;
  readonly adminKey?: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly now?: () => number;
  readonly outputs: Outputs;
  /** Where the counted limits live; this process's memory when omitted (one instance). */
  readonly limitBackend?: LimitBackend;
  /** Where the endpoints' breakers live; this process's memory when omitted (one instance). */
  readonly breakerBackend?: BreakerBackend;
  readonly tracing?: Tracing;
  readonly streamDecoding?: StreamDecoding;
}): AppDeps {
  const metrics = new Registry();
  const now = input.now ?? Date.now;
  const limiter = new Limiter(input.limitBackend ?? new MemoryBackend(now), {
    onBackendFailure: input.config.rate_limits?.on_backend_failure ?? 'open',
    // A slot held longer than a credit hold may live belongs to work that died with its instance.
    leaseTtlMs: reservationTtlMs(input.config),
    logger: input.logger,
    metrics,
  });
  input.authenticator.admitWith(limitAdmission(limiter));
  const drain = new Drain();
  const accessLog = new AccessLog();
  const breakers = breakerSettings(input.config);
  const health = new EndpointHealth({
    settings: breakers,
    backend: input.breakerBackend ?? new MemoryBreakers(breakers, now),
    endpoints: endpointKeys(input.config),
    logger: input.logger,
    metrics,
    now,
  });
  return {
    config: input.config,
    store: input.store,
    catalog: input.catalog,
    logger: input.logger,
    metrics,
    authenticator: input.authenticator,
    adminKey: input.adminKey,
    // A plain copy: reading process.env calls into the runtime on every access, and the credentials
    // are read per upstream call. The environment of a running process does not change anyway.
    env: Object.freeze({ ...input.env }),
    now,
    jobs: new Jobs({ store: input.store, settings: jobSettings(input.config), logger: input.logger, metrics, now }),
    outputs: input.outputs,
    limiter,
    health,
    drain,
    streamsCut: drain,
    accessLog,
    onRecord: accessLog.note,
    tracing: input.tracing,
    streamDecoding: input.streamDecoding,
  };
}

/**
 * The limits' counters and the endpoints' breakers in Redis (REDIS_URL). Their modules, and the
 * Redis client's (some 45 ms of a start's CPU), are loaded only by a server that uses them.
 */
async function redisBackends(redis: RedisBackendOptions | undefined, config: GatewayConfig) {
  if (redis === undefined) return { limitBackend: undefined, breakerBackend: undefined };
  const [{ RedisBackend }, { RedisBreakers }] = await Promise.all([import('../limits/redis-backend.ts'), import('../routing/redis-breakers.ts')]);
  return { limitBackend: new RedisBackend(redis), breakerBackend: new RedisBreakers(redis, breakerSettings(config)) };
}

export async function createRuntime(options: RuntimeOptions): Promise<GatewayRuntime> {
  const now = options.now ?? Date.now;
  const catalog = buildCatalog(options.config, { servable: callableRoute });
  for (const { provider, variable } of missingCredentials(options.config, options.env)) {
    options.logger.warn({ provider, variable }, `environment variable ${variable} is unset: every call to provider '${provider}' will fail`);
  }
  const store = await openStore({
    ...options.storage,
    backgroundCheckpoints: true,
    exclusiveServer: true,
    heartbeat: { lapseMs: instanceLapseMs(options.config) },
    logger: options.logger,
    now,
  });
  try {
    // The `gateway` command checks model names against what this server serves (not its own config).
    await store.recordServedModels(nameIndex(options.config.models));
  } catch (error) {
    await store.close();
    throw error;
  }
  const defaultRate = options.config.billing?.default_rate;
  const authenticator = createAuthenticator(store, {
    defaultRate: defaultRate === undefined ? undefined : parseRateMultiplier(defaultRate),
    pollIntervalMs: options.pollIntervalMs,
    logger: options.logger,
  });
  let outputs: Outputs;
  try {
    outputs = new Outputs({
      blobs: openBlobStore({ store, dataDir: options.storage.dataDir, blobDir: options.storage.blobDir, now }),
      secret: await loadOutputSecret({ dataDir: options.storage.dataDir, operatorSecret: options.outputSecret }),
      publicUrl: options.publicUrl,
    });
  } catch (error) {
    authenticator.stop();
    await store.close();
    throw error;
  }
  const { limitBackend, breakerBackend } = await redisBackends(options.redis, options.config);
  const deps = createDeps({ ...options, store, catalog, authenticator, now, outputs, limitBackend, breakerBackend });
  let app: FastifyInstance;
  try {
    app = await buildApp(deps, {
      routes: options.routes ?? ALL_ROUTES,
      drainOnClose: options.drainOnClose,
      requestTimeoutMs: options.requestTimeoutMs,
      limits: options.serverLimits,
    });
  } catch (error) {
    authenticator.stop();
    await deps.limiter.close();
    await deps.health.close();
    await store.close();
    throw error;
  }

  // Counted limits and breakers checked before their connection is up would fail open or closed.
  await Promise.all([limitBackend?.connected(), breakerBackend?.connected()]);
  // Route modules have registered their kinds of job: this instance's workers start.
  deps.jobs.runner.start();
  store.reportVitals(instanceVitals(deps.jobs, now));
  const webhooks = startWebhookDispatcher({
    store,
    settings: webhookSettings(options.config),
    logger: options.logger,
    metrics: deps.metrics,
    worker: store.instanceId,
    now,
    resolve: options.webhookResolver,
  });
  // An ended job's event goes out at once rather than at the dispatcher's next poll.
  deps.jobs.runner.onJobFinished((job) => {
    webhooks.wake();
    // The concurrent-requests slot its submission handed over (http/limits.ts).
    deps.limiter.releaseJob(job);
  });
  const maintenance = startMaintenance(store, {
    intervalMs: options.maintenanceIntervalMs ?? DEFAULT_MAINTENANCE_INTERVAL_MS,
    now,
    logger: options.logger,
    blobs: { store: outputs.blobs, lifetimeMs: REQUEST_LOG_LIFETIME_MS },
  });
  let closing: Promise<void> | undefined;
  // The cut streams write their error event and end; a connection still open after that is closed.
  const cutStreams = () =>
    deps.drain.cutStreams((unended) => {
      // Their clients see the connection close instead of the error event.
      if (unended > 0) options.logger.warn({ streams: unended, afterMs: CUT_BACKSTOP_MS }, 'closed the connections of cut streams that had not ended');
      app.server.closeAllConnections();
    });
  return {
    app,
    deps,
    store,
    async listen(host, port) {
      await app.listen({ host, port });
      const address = app.server.address();
      const boundPort = typeof address === 'object' && address ? address.port : port;
      return `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}`;
    },
    close() {
      return stop(options.jobDrainMs ?? DEFAULT_JOB_DRAIN_MS);
    },
    async drain(deadlineMs) {
      deps.drain.begin();
      const deadline = setTimeout(cutStreams, deadlineMs);
      try {
        await stop(deadlineMs);
      } finally {
        clearTimeout(deadline);
      }
    },
    cutStreams,
  };

  function stop(jobDrainMs: number): Promise<void> {
    closing ??= (async () => {
      authenticator.stop();
      try {
        await deps.jobs.runner.stop(jobDrainMs);
        await app.close();
      } finally {
        await webhooks.stop();
        await maintenance.stop();
        await deps.limiter.close();
        await deps.health.close();
        await store.close();
        // Last, so that the spans of the requests and jobs that just ended are exported.
        await options.tracing?.shutdown();
      }
    })();
    return closing;
  }
}
