/**
 * Every route module of the service, in registration order. Adding an endpoint group is one line
 * here and one module in its own folder.
 */
import type { RouteModule } from './app.ts';

export const ALL_ROUTES: readonly RouteModule[] = [];
