/**
 * GET /v1/models and GET /v1/models/{model} (docs/catalog.md, "HTTP"). Both serve rows the
 * catalog derived at config load for the caller's consent class, filtered by the key's allowed
 * models; nothing is computed per request. A model id contains slashes and is taken as-is from
 * the rest of the path, so `/v1/models/gateway/atlas-4-5` works unencoded; aliases resolve too.
 */
import { errors } from '../core/errors.ts';
import type { RouteModule } from '../http/route-module.ts';
import { ModelList, ModelParams, PublicModel } from '../catalog/schemas.ts';

/** A key's list may be cached privately for a minute (docs/catalog.md, "HTTP"). */
const LIST_CACHE_CONTROL = 'private, max-age=60';

export const catalogRoutes: RouteModule = (app, deps) => {
  const preHandler = deps.authenticator.require('models:read');

  app.get(
    '/v1/models',
    { preHandler, schema: { summary: 'List the models this key can use', tags: ['models'], response: { 200: ModelList } } },
    async (request, reply) => {
      reply.header('cache-control', LIST_CACHE_CONTROL);
      return { object: 'list', data: deps.catalog.listModels(request.auth.consent, request.auth.allowedModels) };
    },
  );

  app.get<{ Params: ModelParams }>(
    '/v1/models/*',
    {
      preHandler,
      schema: { summary: 'Retrieve one model by id or alias', tags: ['models'], params: ModelParams, response: { 200: PublicModel } },
    },
    async (request) => {
      const name = request.params['*'];
      const row = deps.catalog.getModel(name, request.auth.consent, request.auth.allowedModels);
      if (!row) throw errors.modelNotFound(name);
      return row;
    },
  );
};
