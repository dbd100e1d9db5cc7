/**
 * Builds the Fastify application: request ids, the error envelope for every failure (the
 * framework's own included), and the route modules of each part of the pipeline.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { AppDeps } from './deps.ts';
import { installErrorHandling } from './error-handling.ts';
import { installRequestIds } from './request-id.ts';

/** A route module registers its own routes; it receives the shared dependencies. */
export type RouteModule = (app: FastifyInstance, deps: AppDeps) => Promise<void> | void;

export interface BuildAppOptions {
  /** Route modules in registration order; main.ts passes ALL_ROUTES. */
  readonly routes: readonly RouteModule[];
  /** Largest JSON body accepted, in bytes (image edits take 5 MiB). */
  readonly bodyLimit?: number;
}

export async function buildApp(deps: AppDeps, options: BuildAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger,
    disableRequestLogging: true,
    bodyLimit: options.bodyLimit ?? 5 * 1024 * 1024,
    // Validation is strict everywhere: a number sent as "100" is a 400, never coerced.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false, useDefaults: true } },
    return503OnClosing: true,
    forceCloseConnections: true,
  });
  installRequestIds(app);
  installErrorHandling(app);
  for (const register of options.routes) await register(app, deps);
  return app;
}
