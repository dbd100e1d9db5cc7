/**
 * The pages before sign-in: the sign-in form, the single-use link page (invitations, sign-in and
 * reset links all end in choosing a password), the admin key's one-time bootstrap of the first
 * operator, and signing out (here, or everywhere).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { adminKeyMatches } from '../admin/auth.ts';
import { GatewayError } from '../core/errors.ts';
import { ADMIN_KEY_ACTOR, createAuditor } from '../people/audit.ts';
import { MAX_FAILURES_PER_EMAIL, THROTTLE_WINDOW_MS } from '../people/sessions.ts';
import { createUserOperations, LINK_PATH, tokenHash } from '../people/users.ts';
import { MIN_PASSWORD_LENGTH, passwordHashingOf } from '../people/passwords.ts';
import { field, forbidden, sendPage, viewerPost, type Dashboard } from './context.ts';
import { clearSessionCookie, csrfValid, formToken, resolveViewer, safeNext, setSessionCookie } from './guard.ts';
import { html, type Html } from './html.ts';
import { notice, page } from './layout.ts';

type FormRequest = FastifyRequest<{ Querystring: Record<string, string | undefined>; Body: Record<string, string | undefined> }>;

function anonymousPage(request: FastifyRequest, reply: FastifyReply, title: string, body: Html, status = 200) {
  return sendPage(reply, page({ title, user: null, csrf: '', path: request.url }, body), status);
}

const passwordInputs = (form: string) => html`
  <label for="${form}-password">New password <span class="hint">(at least ${MIN_PASSWORD_LENGTH} characters)</span></label>
  <input id="${form}-password" name="password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required>`;

export function registerSignInPages(app: FastifyInstance, dashboard: Dashboard): void {
  const { store } = dashboard.deps;
  const sso = dashboard.deps.config.dashboard?.sso;

  const signInForm = (request: FastifyRequest, reply: FastifyReply, next: string, message: Html | null, status = 200, email = '') =>
    anonymousPage(
      request,
      reply,
      'Sign in',
      html`${message}
      <form method="post" action="/dashboard/sign-in" class="stack">
        <input type="hidden" name="_csrf" value="${formToken(request, reply)}">
        <input type="hidden" name="next" value="${next}">
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" value="${email}" required autofocus>
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required>
        <button type="submit">Sign in</button>
      </form>
      ${sso ? html`<p><a class="button" href="/dashboard/sso/start?next=${encodeURIComponent(next)}">${sso.label ?? 'Sign in with single sign-on'}</a></p>` : ''}
      ${dashboard.deps.adminKey ? html`<p><a href="/dashboard/bootstrap">First start: create the first operator with the admin key</a></p>` : ''}
      <h2>The API</h2>
      <p>Requests to the API carry an API key, not this sign-in. OpenAI SDKs take this address followed by <code>/v1</code> as their base URL;
      Anthropic SDKs take it without <code>/v1</code>. The API is described in <a href="/openapi.json">/openapi.json</a>; health: <a href="/healthz">/healthz</a>.</p>`,
      status,
    );

  app.get('/dashboard/sign-in', async (request: FormRequest, reply) => {
    if (await resolveViewer(request, dashboard.sessions)) return reply.redirect(safeNext(request.query.next), 303);
    return signInForm(request, reply, safeNext(request.query.next), null);
  });

  app.post('/dashboard/sign-in', async (request: FormRequest, reply) => {
    const next = safeNext(field(request.body, 'next'));
    if (!csrfValid(request, request.cookies.gateway_form, dashboard.origin(request))) throw forbidden();
    const email = field(request.body, 'email') ?? '';
    const outcome = await dashboard.sessions.signIn({ email, password: field(request.body, 'password') ?? '', source: request.ip });
    if (!outcome.ok) {
      const message =
        outcome.reason === 'throttled'
          ? notice(
              'error',
              `Too many failed sign-ins for this email or from this address (${MAX_FAILURES_PER_EMAIL} per email within ${THROTTLE_WINDOW_MS / 60_000} minutes). Wait a few minutes and try again, or ask an operator for a password reset link.`,
            )
          : notice('error', 'The email or the password is wrong.');
      return signInForm(request, reply, next, message, outcome.reason === 'throttled' ? 429 : 401, email);
    }
    // A new session every sign-in, and the old cookie's session (if any) ended: no fixation.
    const previous = request.cookies.gateway_session;
    if (previous) await dashboard.sessions.signOut(previous, request.ip);
    setSessionCookie(request, reply, outcome.signedIn.cookie);
    return reply.redirect(next, 303);
  });

  app.get(LINK_PATH, async (request: FormRequest, reply) => {
    const token = request.query.token ?? '';
    const found = token ? await store.getUserToken(tokenHash(token)) : null;
    const now = dashboard.deps.now();
    if (!found || found.usedAt !== null || found.expiresAt <= now) {
      return anonymousPage(
        request,
        reply,
        'Link not valid',
        notice('error', 'This link was used already, has expired, or was withdrawn. Ask an operator for a new one.'),
        404,
      );
    }
    const invitation = found.purpose === 'invitation';
    return anonymousPage(
      request,
      reply,
      invitation ? 'Accept the invitation' : 'Choose a password',
      html`<p>${invitation ? html`You are invited as <strong>${found.role?.kind}</strong> with the email <strong>${found.email}</strong>.` : html`For <strong>${found.email}</strong>.`}</p>
      <form method="post" action="${LINK_PATH}" class="stack">
        <input type="hidden" name="_csrf" value="${formToken(request, reply)}">
        <input type="hidden" name="token" value="${token}">
        ${invitation ? html`<label for="link-name">Your name <span class="hint">(optional)</span></label><input id="link-name" name="display_name" type="text" autocomplete="name" maxlength="200">` : ''}
        ${passwordInputs('link')}
        <button type="submit">${invitation ? 'Accept and sign in' : 'Set the password and sign in'}</button>
      </form>`,
    );
  });

  app.post(LINK_PATH, async (request: FormRequest, reply) => {
    if (!csrfValid(request, request.cookies.gateway_form, dashboard.origin(request))) throw forbidden();
    const signedIn = await dashboard.sessions.redeemLink({
      token: field(request.body, 'token') ?? '',
      password: field(request.body, 'password') ?? '',
      displayName: field(request.body, 'display_name') || null,
      source: request.ip,
    });
    if (!signedIn) return anonymousPage(request, reply, 'Link not valid', notice('error', 'This link was used already, has expired, or was withdrawn.'), 404);
    setSessionCookie(request, reply, signedIn.cookie);
    return reply.redirect('/dashboard', 303);
  });

  // The first operator of a gateway that has none: the admin key signs in once, to create one.
  app.get('/dashboard/bootstrap', async (request, reply) => {
    if (!dashboard.deps.adminKey || (await store.countOperators()) > 0)
      return anonymousPage(request, reply, 'Not available', notice('error', 'An operator exists already: sign in as one.'), 404);
    return anonymousPage(
      request,
      reply,
      'Create the first operator',
      html`<p>This gateway has no operator yet. The admin key (<code>GATEWAY_ADMIN_KEY</code>) may create one, once.</p>
      <form method="post" action="/dashboard/bootstrap" class="stack">
        <input type="hidden" name="_csrf" value="${formToken(request, reply)}">
        <label for="admin-key">Admin key</label>
        <input id="admin-key" name="admin_key" type="password" autocomplete="off" required>
        <label for="bootstrap-email">Your email</label>
        <input id="bootstrap-email" name="email" type="email" autocomplete="username" required>
        ${passwordInputs('bootstrap')}
        <button type="submit">Create and sign in</button>
      </form>`,
    );
  });

  app.post('/dashboard/bootstrap', async (request: FormRequest, reply) => {
    if (!csrfValid(request, request.cookies.gateway_form, dashboard.origin(request))) throw forbidden();
    const adminKey = dashboard.deps.adminKey;
    if (!adminKey || (await store.countOperators()) > 0) throw forbidden();
    const audit = createAuditor(store, { actor: ADMIN_KEY_ACTOR, source: request.ip }, dashboard.deps.now);
    if (!adminKeyMatches(adminKey, field(request.body, 'admin_key') ?? '')) {
      await audit('user.bootstrap_failed', null, null);
      return anonymousPage(request, reply, 'Create the first operator', notice('error', 'The admin key is wrong.'), 401);
    }
    const users = createUserOperations({
      store,
      audit,
      actorLabel: ADMIN_KEY_ACTOR.label,
      now: dashboard.deps.now,
      hashing: passwordHashingOf(dashboard.deps.config),
    });
    const { user } = await users.addUser({
      email: field(request.body, 'email') ?? '',
      role: { kind: 'operator' },
      password: field(request.body, 'password') ?? '',
    });
    const signedIn = await dashboard.sessions.startSession(user, request.ip, 'admin key bootstrap');
    setSessionCookie(request, reply, signedIn.cookie);
    return reply.redirect('/dashboard', 303);
  });

  viewerPost(app, dashboard, '/dashboard/sign-out', async (request, reply, viewer) => {
    await dashboard.sessions.signOut(viewer.cookie, request.ip);
    clearSessionCookie(request, reply);
    return reply.redirect('/dashboard/sign-in', 303);
  });
  viewerPost(app, dashboard, '/dashboard/sign-out-everywhere', async (request, reply, viewer) => {
    await dashboard.sessions.signOutEverywhere(viewer.user, request.ip);
    clearSessionCookie(request, reply);
    return reply.redirect('/dashboard/sign-in', 303);
  });
}

/** A GatewayError's message on a page; anything else is the error handler's. */
export function failureMessage(error: unknown): string | null {
  return error instanceof GatewayError && error.status < 500 ? error.message : null;
}
