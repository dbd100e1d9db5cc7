/**
 * Test-only routes that expose what the platform resolved, so auth and error handling can be tested
 * over real HTTP independently of the pipeline's endpoints.
 */
import type { RouteModule } from '../../src/http/route-module.ts';
import { ALL_ROUTES } from '../../src/server/routes.ts';

const probes: RouteModule = (app, deps) => {
  app.get('/v1/probe/chat', { preHandler: deps.authenticator.require('chat') }, async (request) => ({
    key_id: request.auth.key.id,
    owner: request.auth.owner,
    consent: request.auth.consent,
    rate: `${request.auth.rate.numerator}/${request.auth.rate.denominator}`,
    allowed_models: request.auth.allowedModels === null ? null : [...request.auth.allowedModels],
  }));
  app.get('/v1/probe/models', { preHandler: deps.authenticator.require('models:read') }, async () => ({ ok: true }));
  app.post(
    '/v1/probe/echo',
    {
      schema: {
        body: {
          type: 'object',
          properties: { count: { type: 'integer', minimum: 1 }, nested: { type: 'object', properties: { flag: { type: 'boolean' } } } },
          required: ['count'],
          additionalProperties: false,
        },
      },
    },
    async (request) => request.body,
  );
  app.post('/v1/probe/crash', async () => {
    throw new Error('secret internal detail at /srv/db.sqlite');
  });
};

export const ROUTES_WITH_PROBES = [...ALL_ROUTES, probes];
