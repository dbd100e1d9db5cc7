/**
 * Single sign-on against a real OpenID provider run by the test (oidc-provider, with its built-in
 * login and consent pages), through headless Chromium: the authorization code flow with PKCE.
 * A new user whose claim maps to a role is created with it; an existing user signs in as
 * themselves; an email of a domain that is not allowed, or one no role rule covers, is refused
 * (and audited). The role rules are also checked on their own.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Provider from 'oidc-provider';
import type { Browser } from 'playwright-core';
import { DEMO_CONFIG_PATH, loadConfigFile } from '../../src/config/load.ts';
import type { SsoConfig } from '../../src/config/schema.ts';
import { decideSso } from '../../src/people/sso-role.ts';
import { assertAccessible, launchBrowser, watchedPage } from '../helpers/browser.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const CLIENT_SECRET = 'sso-client-secret-for-the-tests-0123456789';
const PEOPLE: Record<string, Record<string, unknown>> = {
  'ada@example.com': { email: 'ada@example.com', email_verified: true, name: 'Ada', groups: ['gateway-operators'] },
  'bob@partner.example': { email: 'bob@partner.example', email_verified: true, name: 'Bob', groups: [] },
  'carol@partner.example': { email: 'carol@partner.example', email_verified: true, name: 'Carol', groups: [] },
  'eve@elsewhere.example': { email: 'eve@elsewhere.example', email_verified: true, name: 'Eve', groups: ['gateway-operators'] },
};

describe('single sign-on (OpenID Connect)', () => {
  let idp: Server;
  let gateway: TestGateway;
  let browser: Browser;
  before(async () => {
    idp = createServer();
    await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
    const sso: SsoConfig = {
      issuer,
      client_id: 'gateway',
      client_secret_env: 'SSO_CLIENT_SECRET',
      allowed_domains: ['example.com', 'partner.example'],
      roles: [{ claim: 'groups', value: 'gateway-operators', role: 'operator' }],
    };
    gateway = await startGateway({ config: { ...loadConfigFile(DEMO_CONFIG_PATH), dashboard: { sso } }, env: { SSO_CLIENT_SECRET: CLIENT_SECRET } });
    const provider = new Provider(issuer, {
      clients: [{ client_id: 'gateway', client_secret: CLIENT_SECRET, redirect_uris: [`${gateway.baseUrl}/dashboard/sso/callback`] }],
      pkce: { required: () => true },
      // The claims of the scopes asked for go into the ID token, which is what the gateway reads.
      conformIdTokenClaims: false,
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
      findAccount: async (_context: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub, ...PEOPLE[sub] }) }),
    });
    idp.on('request', provider.callback());
    browser = await launchBrowser();
    // An existing member: SSO signs them in as themselves, whatever the rules say.
    await gateway.store.createUser({ email: 'bob@partner.example', role: { kind: 'member', owner: { kind: 'account', id: gateway.account.id } } });
  });
  after(async () => {
    await browser?.close();
    await gateway?.close();
    idp?.closeAllConnections();
    await new Promise((resolve) => idp?.close(resolve));
  });

  /** Signs in at the provider's own pages; returns the page where the gateway left the browser. */
  async function ssoSignIn(email: string) {
    const context = await browser.newContext();
    const { page, problems } = await watchedPage(context);
    await page.goto(`${gateway.baseUrl}/dashboard/sign-in?next=%2Fdashboard%2Fmodels`);
    await assertAccessible(page);
    await page.getByRole('link', { name: 'Sign in with single sign-on' }).click();
    await page.locator('input[name=login]').fill(email);
    await page.locator('input[name=password]').fill('anything');
    await page.locator('button[type=submit]').click();
    await page.locator('button[type=submit]', { hasText: 'Continue' }).click();
    // Signed in: redirected on from the callback; refused: the callback's own page.
    await page.waitForURL((url) => url.origin === gateway.baseUrl);
    await page.waitForLoadState();
    // Only the gateway's own pages count for console errors (the provider's pages are not ours).
    return { page, context, problems: problems.filter((problem) => problem.includes(gateway.baseUrl)) };
  }

  test('a new user whose claim maps to operator is created as one and signed in, back to the page asked for', async () => {
    const { page, context, problems } = await ssoSignIn('ada@example.com');
    try {
      assert.equal(new URL(page.url()).pathname, '/dashboard/models');
      assert.match((await page.locator('.who').textContent())!, /ada@example\.com \(operator\)/);
      const user = await gateway.store.getUserByEmail('ada@example.com');
      assert.deepEqual(user?.role, { kind: 'operator' });
      assert.equal(user?.passwordHash, null, 'no password, no link: single sign-on only');
      const signIn = (await gateway.store.listAudit({ action: 'user.sign_in', actor: 'ada@example.com' }, { limit: 1 })).items[0];
      assert.deepEqual(signIn?.changes, { method: { after: 'single sign-on' } });
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  test('an existing user signs in as themselves', async () => {
    const { page, context } = await ssoSignIn('bob@partner.example');
    try {
      assert.match((await page.locator('.who').textContent())!, /bob@partner\.example \(member\)/);
    } finally {
      await context.close();
    }
  });

  test('a domain that is not allowed, and a new user no rule covers, are refused and audited', async () => {
    for (const [email, message] of [
      ['eve@elsewhere.example', /Sign-in with an email of elsewhere\.example is not allowed here/],
      ['carol@partner.example', /No role is configured for you here/],
    ] as const) {
      const { page, context } = await ssoSignIn(email);
      try {
        assert.match((await page.locator('main').textContent())!, message);
        assert.equal(await gateway.store.getUserByEmail(email), null);
        assert.equal(
          (await page.context().cookies()).some((cookie) => cookie.name === 'gateway_session'),
          false,
          'no session',
        );
        const row = (await gateway.store.listAudit({ action: 'user.sso_refused', targetId: email }, { limit: 1 })).items[0];
        assert.ok(row, `the refusal of ${email} is audited`);
      } finally {
        await context.close();
      }
    }
  });

  test('the role rules: domains, claims (string or list), first match wins, unverified emails refused', () => {
    const config: SsoConfig = {
      issuer: 'https://idp.example',
      client_id: 'x',
      client_secret_env: 'X',
      allowed_domains: ['example.com', 'partner.example'],
      roles: [
        { claim: 'groups', value: 'admins', role: 'operator' },
        { domain: 'partner.example', role: 'member', organization_id: 'org_partner' },
        { claim: 'department', value: 'research', role: 'member', account_id: 'acct_research' },
      ],
    };
    assert.deepEqual(decideSso(config, { email: 'A@Example.com', groups: ['admins'] }), { allowed: true, email: 'a@example.com', role: { kind: 'operator' } });
    assert.deepEqual(decideSso(config, { email: 'b@partner.example', groups: [] }), {
      allowed: true,
      email: 'b@partner.example',
      role: { kind: 'member', owner: { kind: 'organization', id: 'org_partner' } },
    });
    assert.deepEqual(decideSso(config, { email: 'c@example.com', department: 'research' }), {
      allowed: true,
      email: 'c@example.com',
      role: { kind: 'member', owner: { kind: 'account', id: 'acct_research' } },
    });
    assert.deepEqual(decideSso(config, { email: 'd@example.com' }), { allowed: true, email: 'd@example.com', role: null });
    assert.equal(decideSso(config, { email: 'e@example.com', email_verified: false }).allowed, false);
    assert.equal(decideSso(config, { email: 'f@evil.example', groups: ['admins'] }).allowed, false);
    assert.equal(decideSso(config, { sub: 'no-email' }).allowed, false);
  });
});
