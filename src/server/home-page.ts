/**
 * `GET /`: a person who opens the gateway's address in a browser lands on the dashboard
 * (docs/dashboard.md), whose sign-in page also says where the API is (its base URLs and
 * /openapi.json), instead of a JSON 404.
 */
import type { FastifyInstance } from 'fastify';

export function registerHomePage(app: FastifyInstance): void {
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/dashboard', 302));
}
