/**
 * The operator's lists (accounts, organizations, users and invitations, the audit log) and the
 * pages every user has (the catalog as their keys see it, quick-start snippets).
 */
import type { FastifyInstance } from 'fastify';
import { parseRate } from '../admin/parse.ts';
import { errors } from '../core/errors.ts';
import { invitationView } from '../people/users.ts';
import type { AuditRecord, User } from '../storage/people.ts';
import type { Consent } from '../storage/store.ts';
import { field, ownerPath, viewerGet, viewerPage, viewerPost, visibleOwner, type Dashboard } from './context.ts';
import { html, type Html } from './html.ts';
import { csrfField, nextPageLink, noRows, notice, time } from './layout.ts';
import { secretBlock } from './owner-pages.ts';

const PAGE = 25;

function consentInputs(): Html {
  return html`<label><input type="checkbox" name="community_supply"> Community supply</label>
    <label><input type="checkbox" name="training_use"> Training use</label>`;
}

function roleText(user: User): Html {
  return user.role.kind === 'operator' ? html`operator` : html`member of <a href="${ownerPath(user.role.owner)}">${user.role.owner.id}</a>`;
}

function changesText(record: AuditRecord): string {
  if (!record.changes) return '';
  return Object.entries(record.changes)
    .map(
      ([name, change]) =>
        `${name}: ${'before' in change ? `${JSON.stringify(change.before)} → ` : ''}${'after' in change ? JSON.stringify(change.after) : '(removed)'}`,
    )
    .join('; ');
}

/** The model row's listed rates (USD per unit as the catalog shows them: `input: 3`, `per_image: 0.04`). */
function pricingText(pricing: unknown): string {
  return Object.entries((pricing ?? {}) as Record<string, unknown>)
    .filter(([name, value]) => name !== 'unit' && (typeof value === 'string' || typeof value === 'number'))
    .map(([name, value]) => `${name}: ${value}`)
    .join(', ');
}

/** The capabilities the model has (those that are `true`). */
function capabilityText(capabilities: unknown): string {
  return Object.entries((capabilities ?? {}) as Record<string, unknown>)
    .filter(([, value]) => value === true)
    .map(([name]) => name)
    .join(', ');
}

/** A date (YYYY-MM-DD, UTC) or a full ISO time from a filter field; undefined when empty. */
function filterTime(value: string | undefined, name: string): number | undefined {
  if (!value) return undefined;
  const millis = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(millis)) throw errors.invalidValue(name, `'${value}' is not a date (YYYY-MM-DD) or a time.`);
  return millis;
}

export function registerDirectoryPages(app: FastifyInstance, dashboard: Dashboard): void {
  const { store, catalog } = dashboard.deps;

  viewerGet(app, dashboard, '/dashboard', async (_request, reply, viewer) =>
    reply.redirect(viewer.user.role.kind === 'operator' ? '/dashboard/accounts' : ownerPath(viewer.user.role.owner), 303),
  );

  viewerGet(
    app,
    dashboard,
    '/dashboard/accounts',
    async (request, reply, viewer) => {
      const [accounts, organizations] = await Promise.all([
        store.pageAccounts({}, { after: request.query.after ?? null, limit: PAGE }),
        store.pageOrganizations({ limit: 200 }),
      ]);
      return viewerPage(
        request,
        reply,
        viewer,
        'Accounts',
        html`<table>
          <thead><tr><th scope="col">Name</th><th scope="col">Organization</th><th scope="col">Id</th><th scope="col">Created</th></tr></thead>
          <tbody>${accounts.items.map(
            (account) => html`<tr><td><a href="${ownerPath({ kind: 'account', id: account.id })}">${account.name}</a></td>
              <td>${account.organizationId ? html`<a href="${ownerPath({ kind: 'organization', id: account.organizationId })}">${account.organizationId}</a>` : '—'}</td>
              <td><code>${account.id}</code></td><td>${time(account.createdAt)}</td></tr>`,
          )}</tbody>
        </table>
        ${nextPageLink('/dashboard/accounts', {}, accounts.next)}
        <form method="post" action="/dashboard/accounts" class="stack">
          ${csrfField(viewer.session.csrfToken)}
          <h2>Create an account</h2>
          <label for="account-name">Name</label><input id="account-name" name="name" type="text" maxlength="200" required>
          <label for="account-organization">Organization <span class="hint">(optional)</span></label>
          <select id="account-organization" name="organization_id"><option value="">none</option>${organizations.items.map((organization) => html`<option value="${organization.id}">${organization.name}</option>`)}</select>
          ${consentInputs()}
          <label for="account-rate">Rate multiplier <span class="hint">(empty: the configured default)</span></label><input id="account-rate" name="rate" type="text" inputmode="decimal">
          <button type="submit">Create account</button>
        </form>`,
      );
    },
    true,
  );

  viewerPost(
    app,
    dashboard,
    '/dashboard/accounts',
    async (request, reply, viewer) => {
      const rate = field(request.body, 'rate')?.trim();
      const account = await dashboard.operations(request, viewer).createAccount({
        name: field(request.body, 'name') ?? '',
        organizationId: field(request.body, 'organization_id') || null,
        consent: { communitySupply: field(request.body, 'community_supply') === 'on', trainingUse: field(request.body, 'training_use') === 'on' },
        rate: rate ? parseRate(rate, 'rate') : null,
      });
      return reply.redirect(ownerPath({ kind: 'account', id: account.id }), 303);
    },
    true,
  );

  viewerGet(
    app,
    dashboard,
    '/dashboard/organizations',
    async (request, reply, viewer) => {
      const organizations = await store.pageOrganizations({ after: request.query.after ?? null, limit: PAGE });
      return viewerPage(
        request,
        reply,
        viewer,
        'Organizations',
        html`<table>
          <thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Created</th></tr></thead>
          <tbody>${organizations.items.map(
            (organization) =>
              html`<tr><td><a href="${ownerPath({ kind: 'organization', id: organization.id })}">${organization.name}</a></td><td><code>${organization.id}</code></td><td>${time(organization.createdAt)}</td></tr>`,
          )}</tbody>
        </table>
        ${nextPageLink('/dashboard/organizations', {}, organizations.next)}
        <form method="post" action="/dashboard/organizations" class="stack">
          ${csrfField(viewer.session.csrfToken)}
          <h2>Create an organization</h2>
          <label for="organization-name">Name</label><input id="organization-name" name="name" type="text" maxlength="200" required>
          ${consentInputs()}
          <button type="submit">Create organization</button>
        </form>`,
      );
    },
    true,
  );

  viewerPost(
    app,
    dashboard,
    '/dashboard/organizations',
    async (request, reply, viewer) => {
      const organization = await dashboard.operations(request, viewer).createOrganization({
        name: field(request.body, 'name') ?? '',
        consent: { communitySupply: field(request.body, 'community_supply') === 'on', trainingUse: field(request.body, 'training_use') === 'on' },
      });
      return reply.redirect(ownerPath({ kind: 'organization', id: organization.id }), 303);
    },
    true,
  );

  const usersPage = async (
    request: Parameters<Parameters<typeof viewerGet>[3]>[0],
    viewer: Parameters<Parameters<typeof viewerGet>[3]>[2],
    top: Html | null,
  ) => {
    const [users, invitations] = await Promise.all([
      store.listUsers({}, { after: request.query.after ?? null, limit: PAGE }),
      store.listInvitations(dashboard.deps.now(), { after: request.query.invitations_after ?? null, limit: PAGE }),
    ]);
    const csrf = viewer.session.csrfToken;
    return html`${top}
      <table>
        <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Last sign-in</th><th scope="col">Actions</th></tr></thead>
        <tbody>${users.items.map(
          (user) => html`<tr><td>${user.email}</td><td>${roleText(user)}</td><td>${user.status}</td><td>${time(user.lastSignInAt)}</td>
            <td><form method="post" action="/dashboard/users/${user.id}/reset-link" class="inline">${csrfField(csrf)}<button type="submit" class="secondary" aria-label="Password reset link for ${user.email}">Reset link</button></form>
            ${user.id === viewer.user.id ? '' : html`<form method="post" action="/dashboard/users/${user.id}/remove" class="inline" data-confirm="Remove ${user.email}?">${csrfField(csrf)}<button type="submit" class="danger" aria-label="Remove ${user.email}">Remove</button></form>`}</td></tr>`,
        )}</tbody>
      </table>
      ${nextPageLink('/dashboard/users', {}, users.next)}
      <h2>Open invitations</h2>
      <table>
        <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Invited by</th><th scope="col">Expires</th><th scope="col">Actions</th></tr></thead>
        <tbody>${invitations.items.length === 0 ? noRows(5, 'No open invitation.') : ''}${invitations.items.map((token) => {
          const view = invitationView(token);
          return html`<tr><td>${view.email}</td><td>${view.role}${(view.account_id ?? view.organization_id) ? html` of <code>${view.account_id ?? view.organization_id}</code>` : ''}</td><td>${view.created_by}</td><td>${time(token.expiresAt)}</td>
            <td><form method="post" action="/dashboard/invitations/${token.id}/revoke" class="inline">${csrfField(csrf)}<button type="submit" class="secondary" aria-label="Withdraw the invitation of ${view.email}">Withdraw</button></form></td></tr>`;
        })}</tbody>
      </table>
      ${nextPageLink('/dashboard/users', {}, invitations.next, 'invitations_after')}
      <form method="post" action="/dashboard/users/invite" class="stack">
        ${csrfField(csrf)}
        <h2>Invite an operator</h2>
        <p class="hint">Members are invited from their account's or organization's page.</p>
        <label for="operator-email">Email</label><input id="operator-email" name="email" type="email" required>
        <button type="submit">Create invitation link</button>
      </form>
`;
  };

  viewerGet(
    app,
    dashboard,
    '/dashboard/users',
    async (request, reply, viewer) => viewerPage(request, reply, viewer, 'Users and invitations', await usersPage(request, viewer, null)),
    true,
  );

  viewerPost(
    app,
    dashboard,
    '/dashboard/users/invite',
    async (request, reply, viewer) => {
      const link = await dashboard.users(request, viewer).invite({ email: field(request.body, 'email') ?? '', role: { kind: 'operator' } });
      const top = html`${notice('ok', `Invitation for ${link.token.email} created; it works once, for 7 days.`)}${secretBlock('invitation-link', 'Invitation link', `${dashboard.origin(request)}${link.path}`)}`;
      return viewerPage(request, reply, viewer, 'Users and invitations', await usersPage(request as never, viewer, top));
    },
    true,
  );
  viewerPost<{ id: string }>(
    app,
    dashboard,
    '/dashboard/users/:id/reset-link',
    async (request, reply, viewer) => {
      const link = await dashboard.users(request, viewer).passwordResetLink(request.params.id);
      const top = html`${notice('ok', `Password reset link for ${link.token.email}; it works once, for an hour.`)}${secretBlock('reset-link', 'Reset link', `${dashboard.origin(request)}${link.path}`)}`;
      return viewerPage(request, reply, viewer, 'Users and invitations', await usersPage(request as never, viewer, top));
    },
    true,
  );
  viewerPost<{ id: string }>(
    app,
    dashboard,
    '/dashboard/users/:id/remove',
    async (request, reply, viewer) => {
      await dashboard.users(request, viewer).removeUser(request.params.id);
      return reply.redirect('/dashboard/users', 303);
    },
    true,
  );
  viewerPost<{ id: string }>(
    app,
    dashboard,
    '/dashboard/invitations/:id/revoke',
    async (request, reply, viewer) => {
      await dashboard.users(request, viewer).revokeInvitation(request.params.id);
      return reply.redirect('/dashboard/users', 303);
    },
    true,
  );

  viewerGet(
    app,
    dashboard,
    '/dashboard/audit',
    async (request, reply, viewer) => {
      const query = request.query;
      const filter = {
        actor: query.actor || undefined,
        targetId: query.target || undefined,
        action: query.action || undefined,
        since: filterTime(query.since, 'since'),
        until: filterTime(query.until, 'until'),
      };
      const rows = await store.listAudit(filter, { after: query.after ?? null, limit: 50 });
      return viewerPage(
        request,
        reply,
        viewer,
        'Audit log',
        html`<form method="get" action="/dashboard/audit" class="stack" role="search" aria-label="Filter the audit log">
          <label for="audit-actor">Actor <span class="hint">(email, or a user id)</span></label><input id="audit-actor" name="actor" type="text" value="${query.actor ?? ''}">
          <label for="audit-target">Target id</label><input id="audit-target" name="target" type="text" value="${query.target ?? ''}">
          <label for="audit-action">Action <span class="hint">(e.g. key.revoke, or key. for every key action)</span></label><input id="audit-action" name="action" type="text" value="${query.action ?? ''}">
          <label for="audit-since">From <span class="hint">(YYYY-MM-DD, UTC)</span></label><input id="audit-since" name="since" type="text" value="${query.since ?? ''}">
          <label for="audit-until">Until</label><input id="audit-until" name="until" type="text" value="${query.until ?? ''}">
          <button type="submit">Filter</button>
        </form>
        <table>
          <caption class="hint">Newest first. Each row carries the hash of the one before; <code>gateway audit verify</code> checks the chain.</caption>
          <thead><tr><th scope="col">#</th><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Changes</th><th scope="col">From</th></tr></thead>
          <tbody>${rows.items.map(
            (row) => html`<tr><td>${row.seq}</td><td>${time(row.at)}</td><td>${row.actor.label}</td><td><code>${row.action}</code></td>
              <td>${row.target ? html`${row.target.kind} <code>${row.target.id}</code>` : ''}</td><td>${changesText(row)}</td><td>${row.source ?? ''}</td></tr>`,
          )}</tbody>
        </table>
        ${nextPageLink('/dashboard/audit', { actor: query.actor, target: query.target, action: query.action, since: query.since, until: query.until }, rows.next)}`,
      );
    },
    true,
  );

  /** The consent the viewer's keys are served under: a member's owner's; an operator picks an owner, or sees every model. */
  const viewerConsent = async (user: User): Promise<Consent | null> =>
    user.role.kind === 'operator' ? null : (await visibleOwner(dashboard, user, user.role.owner)).consent;

  viewerGet(app, dashboard, '/dashboard/models', async (request, reply, viewer) => {
    const consent = (await viewerConsent(viewer.user)) ?? { communitySupply: true, trainingUse: true };
    const models = catalog.listModels(consent, null);
    return viewerPage(
      request,
      reply,
      viewer,
      'Models',
      html`<p class="hint">${viewer.user.role.kind === 'operator' ? 'Every model of the catalog.' : 'The models your keys can call, with the prices and capabilities your account is served.'} The same list as <code>GET /v1/models</code>.</p>
      <table>
        <thead><tr><th scope="col">Model</th><th scope="col">Category</th><th scope="col">Prices</th><th scope="col">Capabilities</th></tr></thead>
        <tbody>${models.map(
          (model) => html`<tr><td><code>${model.id}</code></td><td>${String(model.category ?? '')}</td>
            <td>${pricingText(model.pricing)}</td><td>${capabilityText(model.capabilities)}</td></tr>`,
        )}</tbody>
      </table>`,
    );
  });

  viewerGet(app, dashboard, '/dashboard/quick-start', async (request, reply, viewer) => {
    const origin = dashboard.origin(request);
    const model =
      catalog.listModels((await viewerConsent(viewer.user)) ?? { communitySupply: true, trainingUse: true }, null).find((row) => row.category === 'LLM')?.id ??
      'MODEL';
    const snippet = (
      id: string,
      label: string,
      code: string,
    ) => html`<h2 id="${id}-heading">${label}</h2><pre tabindex="0" aria-labelledby="${id}-heading"><code id="${id}">${code}</code></pre>
      <button type="button" class="secondary" data-copy="${id}">Copy</button> <span id="${id}-status" role="status"></span>`;
    return viewerPage(
      request,
      reply,
      viewer,
      'Quick start',
      html`<p>Create a key on your ${viewer.user.role.kind === 'member' ? html`<a href="${ownerPath(viewer.user.role.owner)}">overview</a>` : 'account’s page'}, then put it in <code>GATEWAY_API_KEY</code>.</p>
      ${snippet('curl', 'curl', `curl ${origin}/v1/chat/completions \\\n  -H "Authorization: Bearer $GATEWAY_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"model": "${model}", "messages": [{"role": "user", "content": "Hello"}]}'`)}
      ${snippet('openai', 'OpenAI SDK (Python)', `from openai import OpenAI\n\nclient = OpenAI(base_url="${origin}/v1", api_key=os.environ["GATEWAY_API_KEY"])\nreply = client.chat.completions.create(model="${model}", messages=[{"role": "user", "content": "Hello"}])\nprint(reply.choices[0].message.content)`)}
      ${snippet('anthropic', 'Anthropic SDK (TypeScript)', `import Anthropic from '@anthropic-ai/sdk';\n\nconst client = new Anthropic({ baseURL: '${origin}', apiKey: process.env.GATEWAY_API_KEY });\nconst message = await client.messages.create({ model: '${model}', max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }] });\nconsole.log(message.content);`)}`,
    );
  });
}
