/**
 * OpenID Connect sign-in (docs/dashboard.md, "Single sign-on"): the authorization code flow with
 * PKCE (S256), a state and a nonce, through openid-client. The start keeps the verifier, state,
 * nonce and the page to return to in a short-lived HttpOnly cookie scoped to the callback; the
 * callback exchanges the code, checks the ID token (issuer, audience, nonce, signature), then
 * decides with the allowed domains and role rules (people/sso-role.ts). A known email signs in as
 * its user; a new one is created with the role of the first matching rule; anything else is
 * refused and audited.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import * as oidc from 'openid-client';
import type { SsoConfig } from '../config/schema.ts';
import { passwordHashingOf } from '../people/passwords.ts';
import { createAuditor } from '../people/audit.ts';
import { decideSso, ssoRuleProblem } from '../people/sso-role.ts';
import { createUserOperations } from '../people/users.ts';
import type { AuditActor } from '../storage/people.ts';
import { sendPage, type Dashboard } from './context.ts';
import { safeNext, setSessionCookie } from './guard.ts';
import { html } from './html.ts';
import { notice, page } from './layout.ts';

const SSO_COOKIE = 'gateway_sso';
const SSO_PATH = '/dashboard/sso';
const FLOW_LIFETIME_S = 600;

interface Flow {
  readonly verifier: string;
  readonly state: string;
  readonly nonce: string;
  readonly next: string;
}

/** Plain http is allowed only for a provider on this machine (a test, a local provider). */
function isAllowedIssuer(issuer: URL): boolean {
  return issuer.protocol === 'https:' || ['127.0.0.1', 'localhost', '[::1]'].includes(issuer.hostname);
}

export function registerSsoPages(app: FastifyInstance, dashboard: Dashboard, sso: SsoConfig): void {
  const issuer = new URL(sso.issuer);
  if (!isAllowedIssuer(issuer)) throw new Error(`dashboard.sso.issuer must be an https URL, got '${sso.issuer}'`);
  sso.roles.forEach((rule, index) => {
    const problem = ssoRuleProblem(rule);
    if (problem) throw new Error(`dashboard.sso.roles[${index}]: ${problem}`);
  });
  let discovered: Promise<oidc.Configuration> | undefined;
  const configuration = () => {
    discovered ??= oidc
      .discovery(
        issuer,
        sso.client_id,
        dashboard.deps.env[sso.client_secret_env] ?? '',
        undefined,
        issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined,
      )
      .catch((error: unknown) => {
        discovered = undefined;
        throw error;
      });
    return discovered;
  };
  const callbackUrl = (request: FastifyRequest) => `${dashboard.origin(request)}${SSO_PATH}/callback`;
  const refused = (request: FastifyRequest, reply: FastifyReply, message: string) =>
    sendPage(
      reply,
      page(
        { title: 'Single sign-on refused', user: null, csrf: '', path: request.url },
        html`${notice('error', message)}<p><a href="/dashboard/sign-in">Back to sign-in</a></p>`,
      ),
      403,
    );

  app.get<{ Querystring: { next?: string } }>(`${SSO_PATH}/start`, async (request, reply) => {
    const flow: Flow = { verifier: oidc.randomPKCECodeVerifier(), state: oidc.randomState(), nonce: oidc.randomNonce(), next: safeNext(request.query.next) };
    const url = oidc.buildAuthorizationUrl(await configuration(), {
      redirect_uri: callbackUrl(request),
      scope: 'openid email profile',
      code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    reply.setCookie(SSO_COOKIE, JSON.stringify(flow), {
      path: SSO_PATH,
      httpOnly: true,
      sameSite: 'lax',
      secure: request.protocol === 'https',
      maxAge: FLOW_LIFETIME_S,
    });
    return reply.redirect(url.href, 303);
  });

  app.get(`${SSO_PATH}/callback`, async (request, reply) => {
    reply.clearCookie(SSO_COOKIE, { path: SSO_PATH });
    let flow: Flow;
    try {
      flow = JSON.parse(request.cookies[SSO_COOKIE] ?? '') as Flow;
    } catch {
      return refused(request, reply, 'The sign-in took too long or did not start here: try again.');
    }
    let claims: Record<string, unknown>;
    try {
      const current = new URL(`${callbackUrl(request)}${request.url.slice(request.url.indexOf('?'))}`);
      const tokens = await oidc.authorizationCodeGrant(await configuration(), current, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
      });
      claims = { ...tokens.claims() };
    } catch (error) {
      request.log.warn({ err: error }, 'single sign-on failed');
      return refused(request, reply, 'The identity provider did not confirm the sign-in: try again.');
    }
    const { store, now } = dashboard.deps;
    const decision = decideSso(sso, claims);
    const anonymous: AuditActor = { kind: 'anonymous', id: null, label: typeof claims.email === 'string' ? claims.email : String(claims.sub ?? 'unknown') };
    if (!decision.allowed) {
      await createAuditor(store, { actor: anonymous, source: request.ip }, now)(
        'user.sso_refused',
        { kind: 'email', id: anonymous.label },
        { reason: { after: decision.reason } },
      );
      return refused(request, reply, decision.reason);
    }
    let user = await store.getUserByEmail(decision.email);
    if (!user) {
      if (!decision.role) {
        await createAuditor(store, { actor: anonymous, source: request.ip }, now)(
          'user.sso_refused',
          { kind: 'email', id: decision.email },
          { reason: { after: 'no role rule matches' } },
        );
        return refused(request, reply, 'No role is configured for you here: ask an operator.');
      }
      const actor: AuditActor = { kind: 'system', id: null, label: `single sign-on (${issuer.host})` };
      const users = createUserOperations({
        store,
        audit: createAuditor(store, { actor, source: request.ip }, now),
        actorLabel: actor.label,
        now,
        hashing: passwordHashingOf(dashboard.deps.config),
      });
      user = (
        await users.addUser({
          email: decision.email,
          displayName: typeof claims.name === 'string' ? claims.name : null,
          role: decision.role,
          signInLink: false,
        })
      ).user;
    }
    if (user.status !== 'active') return refused(request, reply, 'This user is disabled.');
    const signedIn = await dashboard.sessions.startSession(user, request.ip, 'single sign-on');
    setSessionCookie(request, reply, signedIn.cookie);
    return reply.redirect(flow.next, 303);
  });
}
