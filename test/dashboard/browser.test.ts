/**
 * The dashboard end to end in headless Chromium, on SQLite and on PostgreSQL: an operator signs in,
 * creates an organization and an account, adds credit and invites a member; the member accepts,
 * creates a key, calls /v1/chat/completions with it through the openai SDK, sees the balance drop by
 * exactly the charged cost, revokes the key, and the next call is a 401; the audit log shows each
 * step. Every page: no console error, no serious accessibility violation. With
 * DASHBOARD_SCREENSHOTS=<dir>, the SQLite run saves screenshots of the main pages there.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { formatUsd, usdToPicos } from '../../src/core/money.ts';
import { call } from '../helpers/http.ts';
import { assertAccessible, browserForTests, screenshotter, submitSignIn, watchedPage } from '../helpers/browser.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const ADMIN_KEY = 'admin-secret-for-browser-tests-0123456789';
const OPERATOR = { email: 'ops@example.com', password: 'correct horse battery staple' };
const MEMBER = { email: 'dev@example.com', password: 'another long passphrase' };
const MODEL = 'gateway/atlas-4-5';
const browser = browserForTests();

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`the dashboard in a browser (${engine})`, () => {
    let gateway: TestGateway;
    before(async () => {
      gateway = await startGateway({ engine, adminKey: ADMIN_KEY });
      const created = await call(gateway.baseUrl, 'POST', '/admin/v1/users', { key: ADMIN_KEY, json: { ...OPERATOR, role: 'operator' } });
      assert.equal(created.status, 200, created.text);
    });
    after(() => gateway?.close());

    const shoot = screenshotter(engine);
    /** Loads a page, checks it for accessibility. */
    const visit = async (page: Page, path: string) => {
      await page.goto(`${gateway.baseUrl}${path}`);
      await assertAccessible(page);
    };

    test('operator and member, from sign-in to a revoked key, with the audit log of every step', async () => {
      const operatorContext = await browser().newContext();
      const memberContext = await browser().newContext();
      const operator = await watchedPage(operatorContext);
      const member = await watchedPage(memberContext);
      try {
        const ops = operator.page;
        await ops.goto(`${gateway.baseUrl}/`);
        assert.match(ops.url(), /\/dashboard\/sign-in\?next=%2Fdashboard$/, 'the root leads to the dashboard, which asks for a sign-in');
        await assertAccessible(ops);
        await shoot(ops, 'sign-in');
        await submitSignIn(ops, OPERATOR);
        await ops.waitForURL(/\/dashboard\/accounts$/);
        await assertAccessible(ops);

        await visit(ops, '/dashboard/organizations');
        await ops.getByLabel('Name').fill('Acme');
        await ops.getByRole('button', { name: 'Create organization' }).click();
        await ops.waitForURL(/\/dashboard\/owners\/organization\//);

        await visit(ops, '/dashboard/accounts');
        await ops.getByLabel('Name').fill('Acme research');
        await ops.getByLabel('Organization').selectOption({ label: 'Acme' });
        await ops.getByRole('button', { name: 'Create account' }).click();
        await ops.waitForURL(/\/dashboard\/owners\/account\//);
        const accountPath = new URL(ops.url()).pathname;
        const accountId = accountPath.split('/').at(-1)!;

        await ops.getByLabel('Amount, USD').fill('5');
        await ops.getByLabel('Note').fill('welcome credit');
        await ops.getByRole('button', { name: 'Add credit' }).click();
        await ops.waitForURL(new RegExp(`${accountPath}$`));
        assert.equal(await ops.getByTestId('available').textContent(), '5 USD');
        await ops.getByLabel('Invite a member by email').fill(MEMBER.email);
        await ops.getByRole('button', { name: 'Create invitation link' }).click();
        const invitation = (await ops.locator('#invitation-link').textContent())!.trim();
        assert.match(invitation, /\/dashboard\/link\?token=[A-Za-z0-9_-]{43}$/);
        await assertAccessible(ops);
        await shoot(ops, 'account-operator');

        const dev = member.page;
        await dev.goto(invitation);
        await assertAccessible(dev);
        await dev.getByLabel('Your name').fill('Dev');
        await dev.getByLabel('New password').fill(MEMBER.password);
        await dev.getByRole('button', { name: 'Accept and sign in' }).click();
        await dev.waitForURL(new RegExp(`${accountPath}$`));
        await assertAccessible(dev);
        await dev.getByLabel('Name', { exact: true }).fill('laptop');
        await dev.getByRole('checkbox', { name: 'chat' }).check();
        await dev.getByRole('button', { name: 'Create key' }).click();
        const apiKey = (await dev.locator('#new-key').textContent())!.trim();
        assert.match(apiKey, /^gateway_/);
        await shoot(dev, 'new-key');

        const client = new OpenAI({ apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
        const { response } = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hello' }] }).withResponse();
        const cost = response.headers.get('x-gateway-cost-usd')!;
        assert.ok(usdToPicos(cost) > 0n, `a paid model costs something (${cost})`);
        await dev.goto(`${gateway.baseUrl}${accountPath}`);
        assert.equal(
          await dev.getByTestId('available').textContent(),
          `${formatUsd(usdToPicos('5') - usdToPicos(cost))} USD`,
          'the balance dropped by exactly the cost',
        );
        assert.equal(await dev.getByTestId('held').textContent(), '0 USD');
        const chargeRow = dev.locator('tbody tr', { hasText: response.headers.get('x-gateway-request-id')! });
        assert.match((await chargeRow.textContent())!, new RegExp(`−${cost.replace('.', '\\.')}`), 'the charge is in the history with its exact amount');
        await assertAccessible(dev);
        await shoot(dev, 'account-member');

        await dev.getByRole('button', { name: `Revoke key laptop ${apiKey.slice(0, 12)}` }).click();
        await dev.waitForURL(new RegExp(`${accountPath}$`));
        assert.match((await dev.locator('tbody tr', { hasText: 'laptop' }).textContent())!, /revoked/);
        await assert.rejects(
          client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hello' }] }),
          (error: unknown) => error instanceof OpenAI.AuthenticationError,
        );

        for (const path of ['/dashboard/models', '/dashboard/quick-start']) {
          await visit(dev, path);
          await shoot(dev, path.split('/').at(-1)!);
        }

        await visit(ops, `/dashboard/audit?target=${accountId}`);
        const accountRows = (await ops.locator('tbody').textContent())!;
        for (const action of ['account.create', 'credit.add']) assert.match(accountRows, new RegExp(action.replace('.', '\\.')));
        await visit(ops, '/dashboard/audit');
        await shoot(ops, 'audit');
        const log = (await ops.locator('tbody').textContent())!;
        for (const action of [
          'user.sign_in',
          'organization.create',
          'account.create',
          'credit.add',
          'invitation.create',
          'invitation.accept',
          'key.create',
          'key.revoke',
        ]) {
          assert.match(log, new RegExp(action.replace('.', '\\.')), `the audit log shows ${action}`);
        }
        assert.match(log, new RegExp(MEMBER.email), 'the member is named as the actor of their steps');
        await visit(ops, '/dashboard/users');
        await shoot(ops, 'users');
        await visit(ops, `/dashboard/owners/organization/${(await gateway.store.pageOrganizations({ limit: 1 })).items[0]!.id}`);

        assert.deepEqual([...operator.problems, ...member.problems], [], 'no console errors');
      } finally {
        await operatorContext.close();
        await memberContext.close();
      }
    });
  });
}
