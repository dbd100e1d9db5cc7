/**
 * Builds the Fastify application: request ids, the error envelope for every failure (the
 * framework's own included), metrics, the OpenAPI description, the service endpoints and the route
 * modules of each part of the pipeline.
 */
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { AuthContext } from '../auth/context.ts';
import type { AppDeps } from '../http/deps.ts';
import { MAX_PARAM_LENGTH } from '../http/error-mapping.ts';
import type { RouteModule } from '../http/route-module.ts';
import { installBodyBudget } from './body-budget.ts';
import { installBodyParsers } from './body-parsers.ts';
import { installConnectionGuard } from './connection-guard.ts';
import { frameworkErrorOptions, installErrorHandling } from './error-handling.ts';
import { installMetrics } from './metrics.ts';
import { installOpenApi } from './openapi.ts';
import { installRequestIds, newRequestId } from './request-id.ts';
import { registerServiceRoutes } from './service-routes.ts';
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from './server-limits.ts';
import { registerHomePage } from './home-page.ts';
import { DEFAULT_REQUEST_TIMEOUT_MS } from './settings.ts';
import { sharedSerializers, sharedValidators } from './schema-compilers.ts';
import { installRequestTracing } from '../http/request-tracing.ts';

/** A route module registers its own routes; it receives the shared dependencies. */

export interface BuildAppOptions {
  /** Route modules in registration order; main.ts passes ALL_ROUTES. */
  readonly routes: readonly RouteModule[];
  /** Largest JSON body accepted, in bytes (image edits take 5 MiB). */
  readonly bodyLimit?: number;
  /**
   * true: `close()` lets in-flight requests finish and closes only idle connections (a server
   * stopping on a signal). false (default): `close()` cuts every connection at once (tests).
   */
  readonly drainOnClose?: boolean;
  /**
   * How long a client may take to send a whole request, headers and body; a slower one is answered
   * 408 and its connection closed. Only the request counts: an answer streamed for minutes is not
   * limited. Default DEFAULT_REQUEST_TIMEOUT_MS (settings.ts).
   */
  readonly requestTimeoutMs?: number;
  /** Connection and body-budget bounds (server-limits.ts); each unset one takes its default. */
  readonly limits?: Partial<ServerLimits>;
}

/** Node's own limit for the headers alone, kept when the whole-request limit is longer. */
const HEADERS_TIMEOUT_MS = 60_000;

export async function buildApp(deps: AppDeps, options: BuildAppOptions): Promise<FastifyInstance> {
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const app = Fastify({
    loggerInstance: deps.logger,
    // No per-request log lines on the hot path; failures are logged by the error handler.
    // Fastify's own request id is the gateway request id, so log lines carry the id clients see.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    genReqId: newRequestId,
    bodyLimit: options.bodyLimit ?? 5 * 1024 * 1024,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Validation is strict everywhere: a number sent as "100" is a 400, never coerced.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false, useDefaults: true }, plugins: [sharedValidators] },
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers } },
    // Requests arriving while the server drains get the envelope from error-handling.ts instead.
    return503OnClosing: false,
    forceCloseConnections: options.drainOnClose ? 'idle' : true,
    // Fastify sets no request timeout by default: a body sent a byte at a time held its connection
    // (and memory) forever. Node checks the limit periodically, every connectionsCheckingInterval;
    // a tenth of the limit (at most a second) cuts a slow request soon after its time is up.
    requestTimeout: requestTimeoutMs,
    http: {
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, requestTimeoutMs),
      connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(requestTimeoutMs / 10))),
    },
    ...frameworkErrorOptions,
  });
  const limits = { ...DEFAULT_SERVER_LIMITS, ...options.limits };
  installConnectionGuard(app.server, limits, deps.metrics);
  app.decorateRequest('auth', null as unknown as AuthContext);
  app.decorateRequest('limitTicket', null);
  app.decorateRequest('handedToCore', false);
  installRequestIds(app);
  installRequestTracing(app, deps.tracing);
  installBodyParsers(app);
  installErrorHandling(app, deps.drain);
  installMetrics(app, deps.metrics);
  deps.accessLog.install(app);
  installBodyBudget(app, limits.bodyBudgetBytes, deps.metrics);
  await installOpenApi(app);
  registerServiceRoutes(app, deps.store, deps.metrics, deps.drain);
  registerHomePage(app);
  for (const register of options.routes) await register(app, deps);
  return app;
}
