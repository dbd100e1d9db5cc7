/**
 * What the dashboard's pages share: the session, the CSRF check, who may see which owner, the
 * admin operations and user operations acting as the signed-in user, and the HTML answer.
 */
import { DEFAULT_READ_SHARE, ReadPacer } from './read-pacer.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createAdminOperations, type AdminOperations } from '../admin/operations.ts';
import { errors } from '../core/errors.ts';
import type { AppDeps } from '../http/deps.ts';
import { createAuditor, type Auditor } from '../people/audit.ts';
import { passwordHashingOf } from '../people/passwords.ts';
import { userActor, type Sessions } from '../people/sessions.ts';
import { createUserOperations, type UserOperations } from '../people/users.ts';
import type { User } from '../storage/people.ts';
import type { Account, Organization, OwnerRef } from '../storage/store.ts';
import { webhookSettings } from '../webhooks/settings.ts';
import { csrfValid, resolveViewer, setSecurityHeaders, type Viewer } from './guard.ts';
import { type Html, html } from './html.ts';
import { page } from './layout.ts';

export interface Dashboard {
  readonly deps: AppDeps;
  readonly sessions: Sessions;
  /** The origin links and CSRF checks use: GATEWAY_PUBLIC_URL, else the request's own. */
  origin(request: FastifyRequest): string;
  operations(request: FastifyRequest, viewer: Viewer): AdminOperations;
  users(request: FastifyRequest, viewer: Viewer): UserOperations;
  /** Records a change the signed-in user made (docs/dashboard.md, "Audit log"). */
  audit(request: FastifyRequest, viewer: Viewer): Auditor;
  /** Paces the heavy reads (read-pacer.ts). */
  readonly reads: ReadPacer;
}

export function createDashboard(deps: AppDeps, sessions: Sessions): Dashboard {
  const auditor = (request: FastifyRequest, viewer: Viewer) => createAuditor(deps.store, { actor: userActor(viewer.user), source: request.ip }, deps.now);
  return {
    deps,
    sessions,
    origin: (request) => deps.outputs.originOf(request),
    operations: (request, viewer) =>
      createAdminOperations({
        store: deps.store,
        catalog: deps.catalog,
        onChange: () => deps.authenticator.invalidate(),
        webhookPolicy: () => ({ allowPrivateAddresses: webhookSettings(deps.config).allowPrivateAddresses }),
        audit: auditor(request, viewer),
      }),
    users: (request, viewer) =>
      createUserOperations({
        store: deps.store,
        audit: auditor(request, viewer),
        actorLabel: viewer.user.email,
        now: deps.now,
        hashing: passwordHashingOf(deps.config),
      }),
    audit: auditor,
    reads: new ReadPacer(deps.config.dashboard?.read_share ?? DEFAULT_READ_SHARE),
  };
}

export function sendPage(reply: FastifyReply, body: Html, status = 200): FastifyReply {
  setSecurityHeaders(reply);
  reply.header('cache-control', 'no-store');
  return reply.code(status).type('text/html; charset=utf-8').send(body.text);
}

export function viewerPage(request: FastifyRequest, reply: FastifyReply, viewer: Viewer, title: string, body: Html, status = 200): FastifyReply {
  return sendPage(reply, page({ title, user: viewer.user, csrf: viewer.session.csrfToken, path: request.url }, body), status);
}

type Handler<P> = (
  request: FastifyRequest<{ Params: P; Querystring: Record<string, string | undefined>; Body: Record<string, string | string[] | undefined> }>,
  reply: FastifyReply,
  viewer: Viewer,
) => Promise<unknown>;

/**
 * A route for signed-in users. A GET without a session goes to the sign-in page (and back); a POST
 * needs a session, its CSRF token and this origin, or it is a 403 and nothing is done.
 */
function viewerRoute<P>(method: 'GET' | 'POST', app: FastifyInstance, dashboard: Dashboard, path: string, handler: Handler<P>, operatorOnly: boolean): void {
  app.route({
    method,
    url: path,
    handler: async (request, reply) => {
      const viewer = await resolveViewer(request, dashboard.sessions);
      if (!viewer && method === 'GET') return reply.redirect(`/dashboard/sign-in?next=${encodeURIComponent(request.url)}`, 303);
      if (!viewer || (method === 'POST' && !csrfValid(request, viewer.session.csrfToken, dashboard.origin(request)))) throw forbidden();
      if (operatorOnly && viewer.user.role.kind !== 'operator') throw forbidden();
      return handler(request as never, reply, viewer);
    },
  });
}

export function viewerGet<P = Record<string, string>>(
  app: FastifyInstance,
  dashboard: Dashboard,
  path: string,
  handler: Handler<P>,
  operatorOnly = false,
): void {
  viewerRoute('GET', app, dashboard, path, handler, operatorOnly);
}

/** A page whose reads are heavy (usage, the lists, health): served in turn under the read pacer. */
export function pacedGet<P = Record<string, string>>(...[app, dashboard, path, handler, operatorOnly]: Parameters<typeof viewerGet<P>>): void {
  viewerGet<P>(app, dashboard, path, (request, reply, viewer) => dashboard.reads.run(() => handler(request, reply, viewer)), operatorOnly);
}

export function viewerPost<P = Record<string, string>>(
  app: FastifyInstance,
  dashboard: Dashboard,
  path: string,
  handler: Handler<P>,
  operatorOnly = false,
): void {
  viewerRoute('POST', app, dashboard, path, handler, operatorOnly);
}

export class DashboardForbidden extends Error {
  override readonly name = 'DashboardForbidden';
}

export const forbidden = () => new DashboardForbidden('You cannot do this, or your session has ended: sign in again.');

/**
 * Who may see an owner's page and manage its keys: an operator any; a member their own account or
 * organization, and an organization's member its accounts too. Anything else is answered as if
 * the owner did not exist.
 */
export async function visibleOwner(dashboard: Dashboard, user: User, owner: OwnerRef): Promise<Account | Organization> {
  const store = dashboard.deps.store;
  const found = owner.kind === 'account' ? await store.getAccount(owner.id) : await store.getOrganization(owner.id);
  const notFound = errors.notFound(owner.kind === 'account' ? 'Account' : 'Organization', owner.id);
  if (!found) throw notFound;
  if (user.role.kind === 'operator') return found;
  const mine = user.role.owner;
  if (mine.kind === owner.kind && mine.id === owner.id) return found;
  if (mine.kind === 'organization' && owner.kind === 'account' && (found as Account).organizationId === mine.id) return found;
  throw notFound;
}

export function ownerPath(owner: OwnerRef): string {
  return `/dashboard/owners/${owner.kind}/${owner.id}`;
}

export function parseOwner(params: { kind?: string; id?: string }): OwnerRef {
  if ((params.kind !== 'account' && params.kind !== 'organization') || !params.id) throw errors.notFound('Account', params.id);
  return { kind: params.kind, id: params.id };
}

/** A field of a form body as one string (the first, when it came several times). */
export function field(body: Record<string, string | string[] | undefined> | undefined, name: string): string | undefined {
  const value = body?.[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Every value of a repeated field (checkboxes, multiple selects). */
export function fields(body: Record<string, string | string[] | undefined> | undefined, name: string): string[] {
  const value = body?.[name];
  return value === undefined ? [] : [value].flat().filter((item) => item !== '');
}

export const emptyHtml = html``;
