/**
 * The dashboard's people in the admin API: `/admin/v1/users` and `/admin/v1/invitations`
 * (docs/dashboard.md). A link in an answer is shown this once; only its hash is stored.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from '../core/errors.ts';
import type { AppDeps } from '../http/deps.ts';
import { ADMIN_KEY_ACTOR, createAuditor } from '../people/audit.ts';
import { passwordHashingOf } from '../people/passwords.ts';
import { createUserOperations, invitationView, userView, type IssuedLink, type UserOperations } from '../people/users.ts';
import type { UserRole } from '../storage/people.ts';
import { CreateUserBody, IdParams, InvitationBody, PageQuery } from './schemas.ts';

type RoleFields = Pick<CreateUserBody, 'role' | 'account_id' | 'organization_id'>;

function roleOf(body: RoleFields): UserRole {
  const owners = [
    body.account_id ? ({ kind: 'account', id: body.account_id } as const) : null,
    body.organization_id ? ({ kind: 'organization', id: body.organization_id } as const) : null,
  ].filter((owner) => owner !== null);
  if (body.role === 'operator') {
    if (owners.length > 0) throw errors.invalidValue('role', 'An operator belongs to no account or organization.');
    return { kind: 'operator' };
  }
  if (owners.length !== 1)
    throw errors.invalidValue('account_id', "A member belongs to exactly one account or organization: give 'account_id' or 'organization_id'.");
  return { kind: 'member', owner: owners[0]! };
}

export function registerUserRoutes(admin: FastifyInstance, deps: AppDeps): void {
  const users = (request: FastifyRequest): UserOperations =>
    createUserOperations({
      store: deps.store,
      audit: createAuditor(deps.store, { actor: ADMIN_KEY_ACTOR, source: request.ip }, deps.now),
      actorLabel: ADMIN_KEY_ACTOR.label,
      now: deps.now,
      hashing: passwordHashingOf(deps.config),
    });
  const url = (request: FastifyRequest, link: IssuedLink) => `${deps.outputs.originOf(request)}${link.path}`;

  admin.post<{ Body: CreateUserBody }>('/users', { schema: { body: CreateUserBody } }, async (request) => {
    const body = request.body;
    const { user, link } = await users(request).addUser({
      email: body.email,
      displayName: body.display_name ?? null,
      role: roleOf(body),
      ...(body.password === undefined ? {} : { password: body.password }),
    });
    return { ...userView(user), ...(link ? { sign_in_link: url(request, link), link_expires_at: Math.floor(link.token.expiresAt / 1000) } : {}) };
  });
  admin.get<{ Querystring: PageQuery }>('/users', { schema: { querystring: PageQuery } }, async (request) => {
    const page = await users(request).listUsers({}, { after: request.query.after ?? null, limit: request.query.limit ?? 100 });
    return { object: 'list', data: page.items.map(userView), next: page.next };
  });
  admin.get<{ Params: IdParams }>('/users/:id', { schema: { params: IdParams } }, async (request) => userView(await users(request).getUser(request.params.id)));
  admin.delete<{ Params: IdParams }>('/users/:id', { schema: { params: IdParams } }, async (request) => ({
    ...userView(await users(request).removeUser(request.params.id)),
    deleted: true,
  }));
  admin.post<{ Params: IdParams }>('/users/:id/password-reset', { schema: { params: IdParams } }, async (request) => {
    const link = await users(request).passwordResetLink(request.params.id);
    return {
      object: 'password_reset',
      user_id: request.params.id,
      password_reset_link: url(request, link),
      expires_at: Math.floor(link.token.expiresAt / 1000),
    };
  });

  admin.post<{ Body: InvitationBody }>('/invitations', { schema: { body: InvitationBody } }, async (request) => {
    const link = await users(request).invite({ email: request.body.email, role: roleOf(request.body) });
    return { ...invitationView(link.token), invitation_link: url(request, link) };
  });
  admin.get<{ Querystring: PageQuery }>('/invitations', { schema: { querystring: PageQuery } }, async (request) => {
    const page = await users(request).listInvitations({ after: request.query.after ?? null, limit: request.query.limit ?? 100 });
    return { object: 'list', data: page.items.map(invitationView), next: page.next };
  });
  admin.delete<{ Params: IdParams }>('/invitations/:id', { schema: { params: IdParams } }, async (request) => ({
    ...invitationView(await users(request).revokeInvitation(request.params.id)),
    deleted: true,
  }));
}
