/**
 * Builds the Fastify application: request ids, the error envelope for every failure (the
 * framework's own included), metrics, the OpenAPI description, the service endpoints and the route
 * modules of each part of the pipeline.
 */
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { AuthContext } from '../auth/context.ts';
import type { AppDeps } from '../http/deps.ts';
import type { RouteModule } from '../http/route-module.ts';
import { installBodyParsers } from './body-parsers.ts';
import { frameworkErrorOptions, installErrorHandling } from './error-handling.ts';
import { installMetrics } from './metrics.ts';
import { installOpenApi } from './openapi.ts';
import { installRequestIds, newRequestId } from './request-id.ts';
import { registerServiceRoutes } from './service-routes.ts';

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
}

export async function buildApp(deps: AppDeps, options: BuildAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger,
    // No per-request log lines on the hot path; failures are logged by the error handler.
    // Fastify's own request id is the gateway request id, so log lines carry the id clients see.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    genReqId: newRequestId,
    bodyLimit: options.bodyLimit ?? 5 * 1024 * 1024,
    // Validation is strict everywhere: a number sent as "100" is a 400, never coerced.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false, useDefaults: true } },
    // Requests arriving while the server drains get the envelope from error-handling.ts instead.
    return503OnClosing: false,
    forceCloseConnections: options.drainOnClose ? 'idle' : true,
    ...frameworkErrorOptions,
  });
  app.decorateRequest('auth', null as unknown as AuthContext);
  installRequestIds(app);
  installBodyParsers(app);
  installErrorHandling(app);
  installMetrics(app, deps.metrics);
  await installOpenApi(app);
  registerServiceRoutes(app, deps.store, deps.metrics);
  for (const register of options.routes) await register(app, deps);
  return app;
}
