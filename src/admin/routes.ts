/**
 * The admin HTTP API under /admin/v1 (see README "Admin API"). Off unless GATEWAY_ADMIN_KEY is set:
 * then no route is registered and every admin path is a plain 404. Left out of /openapi.json
 * (server/openapi.ts), which describes the customer API.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RouteModule } from '../http/route-module.ts';
import type { AppDeps } from '../http/deps.ts';
import type { OwnerPatch, OwnerRef } from '../storage/store.ts';
import { adminGuard } from './auth.ts';
import { registerEndpoints } from './endpoints.ts';
import { limitUsage } from './limit-usage.ts';
import { createAdminOperations, type AdminOperations } from './operations.ts';
import { ownerFromFields, parseCreditAmount, parseRate, parseSince } from './parse.ts';
import {
  CreateAccountBody,
  CreateKeyBody,
  CreateOrganizationBody,
  CreateWebhookBody,
  CreditBody,
  IdParams,
  OwnerQuery,
  KeyLimitsPatchBody,
  PatchOrganizationBody,
  PatchOwnerBody,
  UsageQuery,
} from './schemas.ts';
import { accountView, creditView, deletedWebhookEndpointView, keyView, organizationView, usageView, webhookEndpointView } from './views.ts';
import { webhookSettings } from '../webhooks/settings.ts';
import { registerUserRoutes } from './user-routes.ts';
import { ADMIN_KEY_ACTOR, createAuditor } from '../people/audit.ts';

type OperationsOf = (request: FastifyRequest) => AdminOperations;

export const adminRoutes: RouteModule = async (app, deps) => {
  const adminKey = deps.adminKey;
  if (!adminKey) return;
  // Each request acts as the admin key, from the client's address: its changes are audited so.
  const operations: OperationsOf = (request) =>
    createAdminOperations({
      store: deps.store,
      catalog: deps.catalog,
      onChange: () => deps.authenticator.invalidate(),
      webhookPolicy: () => ({ allowPrivateAddresses: webhookSettings(deps.config).allowPrivateAddresses }),
      audit: createAuditor(deps.store, { actor: ADMIN_KEY_ACTOR, source: request.ip }, deps.now),
    });
  await app.register(
    async (admin) => {
      admin.addHook('onRequest', adminGuard(adminKey));
      registerOrganizations(admin, operations, deps);
      registerAccounts(admin, operations);
      registerKeys(admin, operations, deps);
      registerUsage(admin, operations);
      registerWebhooks(admin, operations);
      registerUserRoutes(admin, deps);
      registerEndpoints(admin, deps);
    },
    { prefix: '/admin/v1' },
  );
};

function consentPatch(body: PatchOwnerBody): OwnerPatch {
  return {
    ...(body.name === undefined ? {} : { name: body.name }),
    ...(body.community_supply === undefined ? {} : { communitySupply: body.community_supply }),
    ...(body.training_use === undefined ? {} : { trainingUse: body.training_use }),
    ...(body.rate === undefined ? {} : { rate: parseRate(body.rate, 'rate') }),
  };
}

function ownerInput(body: CreateOrganizationBody) {
  return {
    name: body.name,
    consent: { communitySupply: body.community_supply, trainingUse: body.training_use },
    rate: body.rate === undefined ? null : parseRate(body.rate, 'rate'),
  };
}

function registerOrganizations(admin: FastifyInstance, operations: OperationsOf, deps: AppDeps): void {
  const withBalance = async (operations: AdminOperations, id: string) => {
    const organization = await operations.getOrganization(id);
    const owner = { kind: 'organization', id } as const;
    return {
      ...organizationView(organization, await operations.getBalance(owner)),
      usage: await limitUsage(deps.store, deps.limiter, { kind: 'organization', owner }, organization.limits, deps.now()),
    };
  };
  admin.post<{ Body: CreateOrganizationBody }>('/organizations', { schema: { body: CreateOrganizationBody } }, async (request) => {
    const organization = await operations(request).createOrganization(ownerInput(request.body));
    if (request.body.limits) await operations(request).setOrganizationLimits(organization.id, request.body.limits);
    return withBalance(operations(request), organization.id);
  });
  admin.get('/organizations', async (request) => ({
    object: 'list',
    data: (await operations(request).listOrganizations()).map((organization) => organizationView(organization)),
  }));
  admin.get<{ Params: IdParams }>('/organizations/:id', { schema: { params: IdParams } }, (request) => withBalance(operations(request), request.params.id));
  admin.patch<{ Params: IdParams; Body: PatchOrganizationBody }>(
    '/organizations/:id',
    { schema: { params: IdParams, body: PatchOrganizationBody } },
    async (request) => {
      const { limits, ...owner } = request.body;
      await operations(request).updateOrganization(request.params.id, consentPatch(owner));
      if (limits !== undefined) await operations(request).setOrganizationLimits(request.params.id, limits);
      return withBalance(operations(request), request.params.id);
    },
  );
  registerCredit(admin, operations, '/organizations/:id/credit', 'organization');
}

function registerAccounts(admin: FastifyInstance, operations: OperationsOf): void {
  const withBalance = async (operations: AdminOperations, id: string) => {
    const account = await operations.getAccount(id);
    return accountView(account, await operations.getBalance({ kind: 'account', id }));
  };
  admin.post<{ Body: CreateAccountBody }>('/accounts', { schema: { body: CreateAccountBody } }, async (request) => {
    const account = await operations(request).createAccount({ ...ownerInput(request.body), organizationId: request.body.organization_id ?? null });
    return withBalance(operations(request), account.id);
  });
  admin.get('/accounts', async (request) => ({
    object: 'list',
    data: (await operations(request).listAccounts()).map((account) => accountView(account)),
  }));
  admin.get<{ Params: IdParams }>('/accounts/:id', { schema: { params: IdParams } }, (request) => withBalance(operations(request), request.params.id));
  admin.patch<{ Params: IdParams; Body: PatchOwnerBody }>('/accounts/:id', { schema: { params: IdParams, body: PatchOwnerBody } }, async (request) => {
    await operations(request).updateAccount(request.params.id, consentPatch(request.body));
    return withBalance(operations(request), request.params.id);
  });
  registerCredit(admin, operations, '/accounts/:id/credit', 'account');
}

function registerCredit(admin: FastifyInstance, operations: OperationsOf, path: string, kind: OwnerRef['kind']): void {
  admin.post<{ Params: IdParams; Body: CreditBody }>(path, { schema: { params: IdParams, body: CreditBody } }, async (request) => {
    const amount = parseCreditAmount(request.body.amount_usd, 'amount_usd');
    const { entry, balance } = await operations(request).addCredit({ kind, id: request.params.id }, amount, request.body.note);
    return creditView(entry, balance);
  });
}

function registerKeys(admin: FastifyInstance, operations: OperationsOf, deps: AppDeps): void {
  admin.post<{ Body: CreateKeyBody }>('/keys', { schema: { body: CreateKeyBody } }, async (request) => {
    const body = request.body;
    const owner = ownerFromFields(body, true) as OwnerRef;
    const issued = await operations(request).createKey({
      owner,
      name: body.name ?? null,
      scopes: body.scopes ?? null,
      allowedModels: body.allowed_models ?? null,
      limits: body.limits ?? null,
    });
    return keyView(issued.record, issued.plaintext);
  });
  admin.get<{ Querystring: OwnerQuery }>('/keys', { schema: { querystring: OwnerQuery } }, async (request) => ({
    object: 'list',
    data: (await operations(request).listKeys(ownerFromFields(request.query, false))).map((key) => keyView(key)),
  }));
  admin.get<{ Params: IdParams }>('/keys/:id', { schema: { params: IdParams } }, async (request) => {
    const key = await operations(request).getKey(request.params.id);
    return { ...keyView(key), usage: await limitUsage(deps.store, deps.limiter, { kind: 'key', id: key.id }, key.limits, deps.now()) };
  });
  admin.patch<{ Params: IdParams; Body: KeyLimitsPatchBody }>('/keys/:id', { schema: { params: IdParams, body: KeyLimitsPatchBody } }, async (request) =>
    keyView(await operations(request).setKeyLimits(request.params.id, request.body.limits)),
  );
  admin.delete<{ Params: IdParams }>('/keys/:id', { schema: { params: IdParams } }, async (request) =>
    keyView(await operations(request).revokeKey(request.params.id, deps.now())),
  );
}

function registerUsage(admin: FastifyInstance, operations: OperationsOf): void {
  admin.get<{ Querystring: UsageQuery }>('/usage', { schema: { querystring: UsageQuery } }, async (request) => {
    const owner = ownerFromFields(request.query, true) as OwnerRef;
    const since = request.query.since === undefined ? 0 : parseSince(request.query.since, 'since');
    return usageView(owner, since, await operations(request).usage(owner, since));
  });
}

function registerWebhooks(admin: FastifyInstance, operations: OperationsOf): void {
  admin.post<{ Body: CreateWebhookBody }>('/webhooks', { schema: { body: CreateWebhookBody } }, async (request) => {
    const body = request.body;
    const endpoint = await operations(request).createWebhookEndpoint({
      owner: ownerFromFields(body, true) as OwnerRef,
      url: body.url,
      eventTypes: body.event_types ?? null,
    });
    return webhookEndpointView(endpoint, true);
  });
  admin.get<{ Querystring: OwnerQuery }>('/webhooks', { schema: { querystring: OwnerQuery } }, async (request) => ({
    object: 'list',
    data: (await operations(request).listWebhookEndpoints(ownerFromFields(request.query, false))).map((endpoint) => webhookEndpointView(endpoint)),
  }));
  admin.delete<{ Params: IdParams }>('/webhooks/:id', { schema: { params: IdParams } }, async (request) =>
    deletedWebhookEndpointView(await operations(request).removeWebhookEndpoint(request.params.id)),
  );
}
