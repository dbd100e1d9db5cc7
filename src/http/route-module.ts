/**
 * A group of routes (a dialect, the admin API, the model catalog) as the server installs it: given
 * the app and its dependencies, it registers its routes and hooks.
 */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from './deps.ts';

export type RouteModule = (app: FastifyInstance, deps: AppDeps) => Promise<void> | void;
