/**
 * The page of one account or organization, for an operator and for its members: balance (available
 * and held apart), keys (create, with scopes, models of the owner's catalog and limits; the
 * plaintext once; revoke), the credit history with its running balance, members and invitations;
 * for an operator also consent and rate, credit top-ups and webhooks.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SCOPES } from '../auth/context.ts';
import { parseCreditAmount, parseRate } from '../admin/parse.ts';
import { errors } from '../core/errors.ts';
import { formatRateMultiplier, formatUsd } from '../core/money.ts';
import type { User } from '../storage/people.ts';
import type { Account, KeyLimits, Organization, WebhookDelivery, WebhookEndpoint } from '../storage/store.ts';
import { field, fields, ownerPath, parseOwner, viewerGet, viewerPage, viewerPost, visibleOwner, type Dashboard } from './context.ts';
import type { Viewer } from './guard.ts';
import { html, type Html } from './html.ts';
import { csrfField, nextPageLink, noRows, notice, time } from './layout.ts';

const PAGE = 25;
/** Deliveries shown under each webhook, newest first. */
const RECENT_DELIVERIES = 5;
type OwnerParams = { kind: string; id: string };

/** A one-time secret with a copy button (the script copies the element's text). */
export function secretBlock(id: string, label: string, value: string): Html {
  return html`<div class="secret" role="group" aria-labelledby="${id}-label">
    <span id="${id}-label">${label}</span>
    <code id="${id}">${value}</code>
    <button type="button" class="secondary" data-copy="${id}">Copy</button>
    <span id="${id}-status" role="status"></span>
  </div>`;
}

function limitsFrom(body: Record<string, string | string[] | undefined>): KeyLimits | null {
  const limits: Record<string, number | string> = {};
  for (const name of ['requests_per_minute', 'tokens_per_minute', 'concurrent_requests'] as const) {
    const value = field(body, name);
    if (value) {
      const number = Number(value);
      if (!Number.isInteger(number) || number < 1) throw errors.invalidValue(name, `'${name}' must be a whole number of at least 1.`);
      limits[name] = number;
    }
  }
  for (const name of ['spend_per_day_usd', 'spend_per_month_usd', 'spend_limit_usd'] as const) {
    const value = field(body, name);
    if (value) limits[name] = value;
  }
  return Object.keys(limits).length === 0 ? null : (limits as KeyLimits);
}

export function registerOwnerPages(app: FastifyInstance, dashboard: Dashboard): void {
  const { store, catalog } = dashboard.deps;

  async function ownerPage(
    request: FastifyRequest<{ Params: OwnerParams; Querystring: Record<string, string | undefined> }>,
    viewer: Viewer,
    top: Html | null,
  ) {
    const owner = parseOwner(request.params);
    const found = await visibleOwner(dashboard, viewer.user, owner);
    const operator = viewer.user.role.kind === 'operator';
    const [balance, keys, ledger, members, accounts] = await Promise.all([
      store.getBalance(owner),
      store.pageKeys(owner, { after: request.query.keys_after ?? null, limit: PAGE }),
      store.pageLedger(owner, { after: request.query.ledger_after ?? null, limit: PAGE }),
      store.listUsers({ owner }, { limit: 100 }),
      owner.kind === 'organization' ? store.pageAccounts({ organizationId: owner.id }, { after: request.query.accounts_after ?? null, limit: PAGE }) : null,
    ]);
    const webhooks = operator
      ? await Promise.all(
          (await store.listWebhookEndpoints(owner)).map(async (endpoint) => ({
            endpoint,
            deliveries: (await store.listWebhookDeliveries({ endpointId: endpoint.id })).slice(-RECENT_DELIVERIES).reverse(),
          })),
        )
      : [];
    const models = catalog.listModels(found.consent, null);
    const path = ownerPath(owner);
    const title = `${owner.kind === 'account' ? 'Account' : 'Organization'}: ${found.name}`;
    const body = html`${top}
      <section aria-labelledby="balance-heading">
        <h2 id="balance-heading">Balance</h2>
        <div class="figures">
          <div class="figure">Available<strong data-testid="available">${formatUsd(balance.available)} USD</strong></div>
          <div class="figure">Held by running requests<strong data-testid="held">${formatUsd(balance.reserved)} USD</strong></div>
          <div class="figure">Balance<strong data-testid="balance">${formatUsd(balance.balance)} USD</strong></div>
        </div>
        <p class="hint">Id <code>${owner.id}</code>${'organizationId' in found && found.organizationId ? html` · organization <a href="${ownerPath({ kind: 'organization', id: found.organizationId })}">${found.organizationId}</a>` : ''}
        · consent: community supply ${found.consent.communitySupply ? 'on' : 'off'}, training use ${found.consent.trainingUse ? 'on' : 'off'}
        · rate ${found.rate === null ? 'default' : formatRateMultiplier(found.rate)}</p>
      </section>
      ${operator ? operatorForms(path, found, viewer.session.csrfToken) : ''}
      ${
        accounts
          ? html`<section aria-labelledby="accounts-heading"><h2 id="accounts-heading">Accounts of this organization</h2>
          <ul>${accounts.items.map((account) => html`<li><a href="${ownerPath({ kind: 'account', id: account.id })}">${account.name}</a></li>`)}</ul>
          ${nextPageLink(path, { accounts_after: undefined }, accounts.next, 'accounts_after')}</section>`
          : ''
      }
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">API keys</h2>
        <table>
          <caption class="hint">Newest first; last use is the last request charged to the key.</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Scopes</th><th scope="col">Models</th><th scope="col">Created</th><th scope="col">Last use</th><th scope="col">Status</th></tr></thead>
          <tbody>${keys.items.length === 0 ? noRows(7, 'No key yet.') : ''}${keys.items.map(
            ({ key, lastUsedAt }) => html`<tr>
              <td>${key.name ?? '—'}</td><td><code>${key.displayPrefix}…</code></td>
              <td>${key.scopes?.join(', ') ?? 'all'}</td><td>${key.allowedModels?.join(', ') ?? 'all'}</td>
              <td>${time(key.createdAt)}</td><td>${time(lastUsedAt)}</td>
              <td>${
                key.revokedAt === null
                  ? html`<form method="post" action="${path}/keys/${key.id}/revoke" class="inline" data-confirm="Revoke this key? Requests with it fail at once.">
                      ${csrfField(viewer.session.csrfToken)}<button type="submit" class="danger" aria-label="Revoke key ${key.name ?? ''} ${key.displayPrefix}">Revoke</button></form>`
                  : html`revoked ${time(key.revokedAt)}`
              }</td></tr>`,
          )}</tbody>
        </table>
        ${nextPageLink(path, {}, keys.next, 'keys_after')}
        <form method="post" action="${path}/keys" class="stack">
          ${csrfField(viewer.session.csrfToken)}
          <h3>Create a key</h3>
          <label for="key-name">Name</label><input id="key-name" name="name" type="text" maxlength="200">
          <fieldset><legend>Scopes <span class="hint">(none ticked: every scope)</span></legend>
            ${SCOPES.map((scope) => html`<label><input type="checkbox" name="scopes" value="${scope}"> ${scope}</label>`)}
          </fieldset>
          <label for="key-models">Allowed models <span class="hint">(none selected: every model this ${owner.kind} may use)</span></label>
          <select id="key-models" name="allowed_models" multiple size="5">${models.map((model) => html`<option value="${model.id}">${model.id}</option>`)}</select>
          <label for="key-rpm">Requests per minute <span class="hint">(optional)</span></label><input id="key-rpm" name="requests_per_minute" type="number" min="1">
          <label for="key-spend">Spend per day, USD <span class="hint">(optional)</span></label><input id="key-spend" name="spend_per_day_usd" type="text" inputmode="decimal" pattern="\\d+(\\.\\d+)?">
          <button type="submit">Create key</button>
        </form>
      </section>
      <section aria-labelledby="ledger-heading">
        <h2 id="ledger-heading">Credit history</h2>
        <table>
          <caption class="hint">Every credit and charge, newest first, with the balance after it (USD, exact).</caption>
          <thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Balance after</th><th scope="col">Note or request</th></tr></thead>
          <tbody>${ledger.items.length === 0 ? noRows(5, 'No credit or charge yet.') : ''}${ledger.items.map(
            ({ entry, balanceAfter }) => html`<tr>
              <td>${time(entry.createdAt)}</td><td>${entry.kind}</td>
              <td class="num">${entry.kind === 'credit' ? '+' : '−'}${formatUsd(entry.amount)}</td>
              <td class="num">${formatUsd(balanceAfter)}</td>
              <td>${entry.note ?? (entry.requestId ? html`<code>${entry.requestId}</code>` : '')}</td></tr>`,
          )}</tbody>
        </table>
        ${nextPageLink(path, {}, ledger.next, 'ledger_after')}
      </section>
      <section aria-labelledby="members-heading">
        <h2 id="members-heading">Members</h2>
        ${members.items.length === 0 ? html`<p class="hint">No member yet.</p>` : ''}
        <ul>${members.items.map((member: User) => html`<li>${member.email}${member.displayName ? ` (${member.displayName})` : ''} · last sign-in ${time(member.lastSignInAt)}</li>`)}</ul>
        <form method="post" action="${path}/invitations" class="stack">
          ${csrfField(viewer.session.csrfToken)}
          <label for="invite-email">Invite a member by email</label>
          <input id="invite-email" name="email" type="email" required>
          <button type="submit">Create invitation link</button>
        </form>
      </section>
      ${operator ? webhookSection(path, webhooks, viewer.session.csrfToken) : ''}`;
    return { title, body };
  }

  viewerGet<OwnerParams>(app, dashboard, '/dashboard/owners/:kind/:id', async (request, reply, viewer) => {
    const { title, body } = await ownerPage(request, viewer, null);
    return viewerPage(request, reply, viewer, title, body);
  });

  /** Answers a change with the owner's page, a notice on top (and a one-time secret in it). */
  const answer = async (
    request: FastifyRequest<{ Params: OwnerParams }>,
    reply: Parameters<Parameters<typeof viewerPost>[3]>[1],
    viewer: Viewer,
    top: Html,
  ) => {
    const { title, body } = await ownerPage(request as never, viewer, top);
    return viewerPage(request, reply, viewer, title, body);
  };

  viewerPost<OwnerParams>(app, dashboard, '/dashboard/owners/:kind/:id/keys', async (request, reply, viewer) => {
    const owner = parseOwner(request.params);
    await visibleOwner(dashboard, viewer.user, owner);
    const scopes = fields(request.body, 'scopes');
    const models = fields(request.body, 'allowed_models');
    const issued = await dashboard.operations(request, viewer).createKey({
      owner,
      name: field(request.body, 'name') || null,
      scopes: scopes.length === 0 ? null : scopes,
      allowedModels: models.length === 0 ? null : models,
      limits: limitsFrom(request.body),
    });
    return answer(
      request,
      reply,
      viewer,
      html`${notice('ok', 'Key created. Copy it now: it is shown only this once.')}${secretBlock('new-key', 'New API key', issued.plaintext)}`,
    );
  });

  viewerPost<OwnerParams & { keyId: string }>(app, dashboard, '/dashboard/owners/:kind/:id/keys/:keyId/revoke', async (request, reply, viewer) => {
    const owner = parseOwner(request.params);
    await visibleOwner(dashboard, viewer.user, owner);
    const key = await store.getKey(request.params.keyId);
    if (!key || key.owner.kind !== owner.kind || key.owner.id !== owner.id) throw errors.notFound('API key', request.params.keyId);
    await dashboard.operations(request, viewer).revokeKey(key.id, dashboard.deps.now());
    return reply.redirect(ownerPath(owner), 303);
  });

  viewerPost<OwnerParams>(app, dashboard, '/dashboard/owners/:kind/:id/invitations', async (request, reply, viewer) => {
    const owner = parseOwner(request.params);
    await visibleOwner(dashboard, viewer.user, owner);
    const link = await dashboard.users(request, viewer).invite({ email: field(request.body, 'email') ?? '', role: { kind: 'member', owner } });
    return answer(
      request,
      reply,
      viewer,
      html`${notice('ok', `Invitation for ${link.token.email} created. Send them this link; it works once, for 7 days.`)}${secretBlock('invitation-link', 'Invitation link', `${dashboard.origin(request)}${link.path}`)}`,
    );
  });

  viewerPost<OwnerParams>(
    app,
    dashboard,
    '/dashboard/owners/:kind/:id/settings',
    async (request, reply, viewer) => {
      const owner = parseOwner(request.params);
      const operations = dashboard.operations(request, viewer);
      const rate = field(request.body, 'rate')?.trim();
      const patch = {
        communitySupply: field(request.body, 'community_supply') === 'on',
        trainingUse: field(request.body, 'training_use') === 'on',
        rate: rate ? parseRate(rate, 'rate') : null,
      };
      if (owner.kind === 'account') await operations.updateAccount(owner.id, patch);
      else await operations.updateOrganization(owner.id, patch);
      return reply.redirect(ownerPath(owner), 303);
    },
    true,
  );

  viewerPost<OwnerParams>(
    app,
    dashboard,
    '/dashboard/owners/:kind/:id/credit',
    async (request, reply, viewer) => {
      const owner = parseOwner(request.params);
      const amount = parseCreditAmount(field(request.body, 'amount_usd') ?? '', 'amount_usd');
      await dashboard.operations(request, viewer).addCredit(owner, amount, field(request.body, 'note') || null);
      return reply.redirect(ownerPath(owner), 303);
    },
    true,
  );

  viewerPost<OwnerParams>(
    app,
    dashboard,
    '/dashboard/owners/:kind/:id/webhooks',
    async (request, reply, viewer) => {
      const owner = parseOwner(request.params);
      const endpoint = await dashboard.operations(request, viewer).createWebhookEndpoint({ owner, url: field(request.body, 'url') ?? '' });
      return answer(
        request,
        reply,
        viewer,
        html`${notice('ok', 'Webhook added. Copy its signing secret now: it is shown only this once.')}${secretBlock('webhook-secret', 'Signing secret', endpoint.secret)}`,
      );
    },
    true,
  );

  viewerPost<OwnerParams & { webhookId: string }>(
    app,
    dashboard,
    '/dashboard/owners/:kind/:id/webhooks/:webhookId/remove',
    async (request, reply, viewer) => {
      await dashboard.operations(request, viewer).removeWebhookEndpoint(request.params.webhookId);
      return reply.redirect(ownerPath(parseOwner(request.params)), 303);
    },
    true,
  );
}

function operatorForms(path: string, owner: Account | Organization, csrf: string): Html {
  return html`<div class="columns">
    <form method="post" action="${path}/credit" class="stack">
      ${csrfField(csrf)}
      <h2>Add credit</h2>
      <label for="credit-amount">Amount, USD</label>
      <input id="credit-amount" name="amount_usd" type="text" inputmode="decimal" pattern="\\d+(\\.\\d+)?" required>
      <label for="credit-note">Note <span class="hint">(optional, shown in the history)</span></label>
      <input id="credit-note" name="note" type="text" maxlength="200">
      <button type="submit">Add credit</button>
    </form>
    <form method="post" action="${path}/settings" class="stack">
      ${csrfField(csrf)}
      <h2>Consent and rate</h2>
      <label><input type="checkbox" name="community_supply"${owner.consent.communitySupply ? html` checked` : ''}> Community supply</label>
      <label><input type="checkbox" name="training_use"${owner.consent.trainingUse ? html` checked` : ''}> Training use</label>
      <label for="owner-rate">Rate multiplier <span class="hint">(empty: the configured default)</span></label>
      <input id="owner-rate" name="rate" type="text" inputmode="decimal" value="${owner.rate === null ? '' : formatRateMultiplier(owner.rate)}">
      <button type="submit">Save</button>
    </form>
  </div>`;
}

function webhookSection(path: string, webhooks: readonly { endpoint: WebhookEndpoint; deliveries: readonly WebhookDelivery[] }[], csrf: string): Html {
  return html`<section aria-labelledby="webhooks-heading">
    <h2 id="webhooks-heading">Webhooks</h2>
    ${webhooks.map(
      ({ endpoint, deliveries }) => html`<h3><code>${endpoint.url}</code> <span class="hint">(${endpoint.eventTypes?.join(', ') ?? 'every event'})</span></h3>
        <form method="post" action="${path}/webhooks/${endpoint.id}/remove" class="inline" data-confirm="Remove this webhook?">${csrfField(csrf)}<button type="submit" class="secondary" aria-label="Remove the webhook ${endpoint.url}">Remove</button></form>
        ${
          deliveries.length === 0
            ? html`<p class="hint">No delivery yet.</p>`
            : html`<table>
                <caption class="hint">Recent deliveries, newest first.</caption>
                <thead><tr><th scope="col">Event</th><th scope="col">Job</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col">Last answer</th></tr></thead>
                <tbody>${deliveries.map(
                  (delivery) => html`<tr><td><code>${delivery.eventType}</code></td><td><code>${delivery.jobId}</code></td><td>${delivery.status}</td>
                    <td class="num">${delivery.attempts}</td><td>${delivery.lastStatus ?? delivery.lastError ?? '—'}</td></tr>`,
                )}</tbody></table>`
        }`,
    )}
    <form method="post" action="${path}/webhooks" class="stack">
      ${csrfField(csrf)}
      <label for="webhook-url">Add a webhook URL</label>
      <input id="webhook-url" name="url" type="url" required>
      <button type="submit">Add webhook</button>
    </form>
  </section>`;
}
