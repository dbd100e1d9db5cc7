/**
 * The dashboard at /dashboard (docs/dashboard.md): server-rendered HTML pages with one small
 * script and one stylesheet served from the gateway itself, so it needs no build step and no
 * network beyond the gateway. Forms post urlencoded bodies; each answer carries the security
 * headers and each change is checked for CSRF (guard.ts). `GET /` leads here (server/home-page.ts).
 */
import { UsageQueryTimeout } from '../storage/usage.ts';
import { readFile } from 'node:fs/promises';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../core/errors.ts';
import type { RouteModule } from '../http/route-module.ts';
import { passwordHashingOf } from '../people/passwords.ts';
import { createSessions } from '../people/sessions.ts';
import { createDashboard, DashboardForbidden, sendPage } from './context.ts';
import { registerDirectoryPages } from './directory-pages.ts';
import { resolveViewer, setSecurityHeaders } from './guard.ts';
import { html } from './html.ts';
import { notice, page } from './layout.ts';
import { registerHealthPage } from './health-page.ts';
import { registerJobPages } from './job-pages.ts';
import { registerOwnerPages } from './owner-pages.ts';
import { registerRequestPages } from './request-pages.ts';
import { registerSignInPages } from './sign-in-pages.ts';
import { registerUsagePages } from './usage-pages.ts';

const ASSETS = {
  'dashboard.css': { type: 'text/css; charset=utf-8', url: new URL('./assets/dashboard.css', import.meta.url) },
  'dashboard.js': { type: 'text/javascript; charset=utf-8', url: new URL('./assets/dashboard.js', import.meta.url) },
  'usage-chart.js': { type: 'text/javascript; charset=utf-8', url: new URL('./assets/usage-chart.js', import.meta.url) },
  // The chart library, served from the installed package: no CDN, and the CSP allows only our own scripts.
  'chart.umd.min.js': { type: 'text/javascript; charset=utf-8', url: new URL('chart.umd.min.js', import.meta.resolve('chart.js')) },
} as const;

export const dashboardRoutes: RouteModule = async (app, deps) => {
  const sessions = createSessions(deps.store, deps.now, passwordHashingOf(deps.config));
  const dashboard = createDashboard(deps, sessions);
  const assets = new Map(
    await Promise.all(Object.entries(ASSETS).map(async ([name, asset]) => [name, { type: asset.type, body: await readFile(asset.url) }] as const)),
  );

  await app.register(async (scope) => {
    await scope.register(cookie);
    await scope.register(formbody, { bodyLimit: 64 * 1024 });

    scope.get<{ Params: { name: string } }>('/dashboard/assets/:name', async (request, reply) => {
      const asset = assets.get(request.params.name);
      if (!asset) return failurePage(request, reply, 404, 'There is no such file.');
      setSecurityHeaders(reply);
      return reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body);
    });

    // Failures are pages here, not the API's JSON envelope: what went wrong, and a way back.
    scope.setErrorHandler(async (error, request, reply) => {
      if (error instanceof DashboardForbidden) return failurePage(request, reply, 403, error.message);
      // A read past the dashboard's time limit was stopped so that it loads neither the database nor the gateway.
      if (error instanceof UsageQueryTimeout)
        return failurePage(request, reply, 503, 'This page took too long to read. Narrow it with a filter or a shorter period.');
      if (error instanceof GatewayError && error.status < 500) return failurePage(request, reply, error.status, error.message);
      if (error instanceof GatewayError && error.code === 'server_busy') {
        reply.header('retry-after', String(error.retryAfterSeconds ?? 1));
        return failurePage(request, reply, 503, 'The dashboard is busy with other reads: try again in a moment.');
      }
      const status = (error as { statusCode?: number }).statusCode;
      if (status !== undefined && status >= 400 && status < 500) return failurePage(request, reply, status, 'The request could not be read.');
      request.log.error({ err: error }, 'dashboard request failed');
      return failurePage(request, reply, 500, 'Something went wrong on our side; the log has the details.');
    });
    scope.get('/dashboard/*', async (request, reply) => failurePage(request, reply, 404, 'There is no such page.'));

    registerSignInPages(scope, dashboard);
    registerDirectoryPages(scope, dashboard);
    registerOwnerPages(scope, dashboard);
    registerRequestPages(scope, dashboard);
    registerJobPages(scope, dashboard);
    registerHealthPage(scope, dashboard);
    registerUsagePages(scope, dashboard);
    const sso = deps.config.dashboard?.sso;
    // The OpenID client (some 30 ms of a start) is loaded only where single sign-on is configured.
    if (sso) (await import('./sso-pages.ts')).registerSsoPages(scope, dashboard, sso);
  });

  async function failurePage(request: FastifyRequest, reply: FastifyReply, status: number, message: string) {
    const viewer = await resolveViewer(request, sessions).catch(() => null);
    const title = status === 404 ? 'Not found' : status === 403 ? 'Not allowed' : status === 503 ? 'Too long to read' : 'Something went wrong';
    const body = html`${notice('error', message)}<p><a href="/dashboard">Back to the dashboard</a></p>`;
    return sendPage(reply, page({ title, user: viewer?.user ?? null, csrf: viewer?.session.csrfToken ?? '', path: request.url }, body), status);
  }
};
