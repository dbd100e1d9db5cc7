/**
 * Every route module of the service, in registration order. Adding an endpoint group is one line
 * here and one module in its own folder.
 */
import { adminRoutes } from '../admin/routes.ts';
import { dashboardRoutes } from '../dashboard/routes.ts';
import { catalogRoutes } from './model-routes.ts';
import { outputRoutes } from './output-routes.ts';
import { chatRoutes } from '../dialects/chat/route.ts';
import { messagesRoutes } from '../dialects/messages/route.ts';
import { responsesRoutes } from '../dialects/responses/route.ts';
import { imagesRoutes } from '../dialects/images/route.ts';
import { videosRoutes } from '../dialects/videos/route.ts';
import { embeddingsRoutes } from '../dialects/embeddings/route.ts';
import type { RouteModule } from '../http/route-module.ts';

export const ALL_ROUTES: readonly RouteModule[] = [
  adminRoutes,
  catalogRoutes,
  chatRoutes,
  messagesRoutes,
  responsesRoutes,
  imagesRoutes,
  videosRoutes,
  embeddingsRoutes,
  outputRoutes,
  dashboardRoutes,
];
