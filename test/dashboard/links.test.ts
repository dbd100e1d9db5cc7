/**
 * The ways in without a password yet: the admin key's one-time bootstrap of the first operator,
 * the sign-in link `gateway users add --operator` prints, and a password reset link. Each link
 * works once, and setting a password ends the user's other sessions.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../../src/cli/run.ts';
import { cookieValue, formPost, sessionClient, signIn } from '../helpers/dashboard.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const ADMIN_KEY = 'admin-secret-for-link-tests-0123456789';
const PASSWORD = 'a long enough password';

describe('dashboard links and the first operator', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({ adminKey: ADMIN_KEY });
  });
  after(() => gateway?.close());

  /** A page before sign-in: its form cookie, and a POST of the form with it. */
  async function anonymousForm(path: string, fields: Record<string, string>) {
    const page = await fetch(`${gateway.baseUrl}${path}`, { redirect: 'manual' });
    const form = cookieValue(page, 'gateway_form')!;
    const action = path.split('?')[0]!;
    return formPost(gateway.baseUrl, action, { _csrf: form, ...fields }, { cookie: `gateway_form=${form}` });
  }

  test('with no operator, the admin key creates the first one, once', async () => {
    assert.equal((await fetch(`${gateway.baseUrl}/dashboard/bootstrap`)).status, 200);
    const wrong = await anonymousForm('/dashboard/bootstrap', { admin_key: 'not the key', email: 'first@example.com', password: PASSWORD });
    assert.equal(wrong.status, 401);
    assert.equal((await gateway.store.listAudit({ action: 'user.bootstrap_failed' }, { limit: 1 })).items.length, 1);
    const created = await anonymousForm('/dashboard/bootstrap', { admin_key: ADMIN_KEY, email: 'first@example.com', password: PASSWORD });
    assert.equal(created.status, 303);
    const client = await sessionClient(gateway.baseUrl, cookieValue(created, 'gateway_session')!);
    assert.equal((await client.get('/dashboard/users')).status, 200, 'signed in as an operator');
    assert.equal((await fetch(`${gateway.baseUrl}/dashboard/bootstrap`)).status, 404, 'an operator exists: the page is gone');
    const second = await formPost(gateway.baseUrl, '/dashboard/bootstrap', { admin_key: ADMIN_KEY, email: 'second@example.com', password: PASSWORD });
    assert.equal(second.status, 403);
    assert.equal(await gateway.store.getUserByEmail('second@example.com'), null);
    const row = (await gateway.store.listAudit({ action: 'user.create' }, { limit: 1 })).items[0]!;
    assert.equal(row.actor.label, 'admin key');
  });

  test('gateway users add --operator prints a one-time link: it sets a password and signs in, once', async () => {
    let stdout = '';
    const code = await runCli(['users', 'add', 'linked@example.com', '--operator', '--json'], {
      env: { ...gateway.cliEnv, GATEWAY_PUBLIC_URL: gateway.baseUrl },
      stdout: (text) => (stdout += text),
      stderr: () => {},
    });
    assert.equal(code, 0);
    const link = JSON.parse(stdout).sign_in_link as string;
    assert.ok(link.startsWith(`${gateway.baseUrl}/dashboard/link?token=`), link);
    const path = link.slice(gateway.baseUrl.length);
    const token = new URL(link).searchParams.get('token')!;
    const tooShort = await anonymousForm(path, { token, password: 'short' });
    assert.equal(tooShort.status, 400, 'a password under 12 characters is refused, the link kept');
    const used = await anonymousForm(path, { token, password: PASSWORD });
    assert.equal(used.status, 303);
    assert.ok(cookieValue(used, 'gateway_session'));
    assert.equal((await fetch(`${gateway.baseUrl}${path}`)).status, 404, 'used once');
    assert.ok((await signIn(gateway.baseUrl, 'linked@example.com', PASSWORD)).client, 'the new password signs in');
  });

  test('a password reset link sets a new password and ends every other session', async () => {
    const user = (await gateway.store.getUserByEmail('linked@example.com'))!;
    const before = (await signIn(gateway.baseUrl, 'linked@example.com', PASSWORD)).client!;
    const reset = await fetch(`${gateway.baseUrl}/admin/v1/users/${user.id}/password-reset`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    const link = ((await reset.json()) as { password_reset_link: string }).password_reset_link;
    const path = link.slice(link.indexOf('/dashboard'));
    const changed = await anonymousForm(path, { token: new URL(link).searchParams.get('token')!, password: 'a brand new passphrase' });
    assert.equal(changed.status, 303);
    assert.equal((await before.get('/dashboard/users')).status, 303, 'the session from before is over');
    assert.equal((await signIn(gateway.baseUrl, 'linked@example.com', PASSWORD)).response.status, 401, 'the old password is gone');
    assert.ok((await signIn(gateway.baseUrl, 'linked@example.com', 'a brand new passphrase')).client);
  });
});
