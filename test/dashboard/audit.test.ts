/**
 * Every change writes an audit row: the test collects every mutating route of the admin API from the
 * running app and every command of the `gateway` CLI, and fails for one that has no case here (a
 * new route or command must say what it audits) or whose case writes no row of its action. Then
 * `gateway audit verify` accepts the chain, and reports a row changed behind its back.
 */
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RouteOptions } from 'fastify';
import { COMMANDS, runCli } from '../../src/cli/run.ts';
import { ALL_ROUTES } from '../../src/server/routes.ts';
import { SQLITE_FILE_NAME } from '../../src/storage/open-store.ts';
import { call } from '../helpers/http.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const ADMIN_KEY = 'admin-secret-for-audit-tests-0123456789';
const MUTATING = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

describe('the audit log', () => {
  let gateway: TestGateway;
  let dataDir: string;
  const adminRoutes: string[] = [];
  before(async () => {
    const collect = async (app: Parameters<(typeof ALL_ROUTES)[number]>[0]) => {
      app.addHook('onRoute', (route: RouteOptions) => {
        for (const method of [route.method].flat()) {
          if (MUTATING.has(method) && route.url.startsWith('/admin/')) adminRoutes.push(`${method} ${route.url}`);
        }
      });
    };
    gateway = await startGateway({ adminKey: ADMIN_KEY, routes: [collect, ...ALL_ROUTES] });
    dataDir = gateway.storage.dataDir;
  });
  after(() => gateway?.close());

  const admin = (method: string, path: string, json?: unknown) => call(gateway.baseUrl, method, path, { key: ADMIN_KEY, json });
  const lastSeq = async () => (await gateway.store.listAudit({}, { limit: 1 })).items[0]?.seq ?? 0;
  const actionsSince = async (seq: number) => (await gateway.store.auditChain(seq, 100)).map((row) => row);

  test('every mutating admin route writes its audit row, naming the admin key and the address', async () => {
    const org = (await admin('POST', '/admin/v1/organizations', { name: 'audited org' })).body;
    const account = (await admin('POST', '/admin/v1/accounts', { name: 'audited' })).body;
    const key = (await admin('POST', '/admin/v1/keys', { account_id: account.id })).body;
    const webhook = (await admin('POST', '/admin/v1/webhooks', { account_id: account.id, url: 'https://1.1.1.1/hook' })).body;
    const user = (await admin('POST', '/admin/v1/users', { email: 'walker@example.com', role: 'member', account_id: account.id })).body;
    const invitation = (await admin('POST', '/admin/v1/invitations', { email: 'invitee@example.com', role: 'operator' })).body;
    const cases: Record<string, { path: string; body?: unknown; action: string; target?: string }> = {
      'POST /admin/v1/organizations': { path: '/admin/v1/organizations', body: { name: 'o', rate: '1.5' }, action: 'organization.create' },
      'PATCH /admin/v1/organizations/:id': {
        path: `/admin/v1/organizations/${org.id}`,
        body: { training_use: true },
        action: 'organization.update',
        target: org.id,
      },
      'POST /admin/v1/organizations/:id/credit': {
        path: `/admin/v1/organizations/${org.id}/credit`,
        body: { amount_usd: '2' },
        action: 'credit.add',
        target: org.id,
      },
      'POST /admin/v1/accounts': { path: '/admin/v1/accounts', body: { name: 'a' }, action: 'account.create' },
      'PATCH /admin/v1/accounts/:id': { path: `/admin/v1/accounts/${account.id}`, body: { rate: '1.2' }, action: 'account.update', target: account.id },
      'POST /admin/v1/accounts/:id/credit': {
        path: `/admin/v1/accounts/${account.id}/credit`,
        body: { amount_usd: '3', note: 'top-up' },
        action: 'credit.add',
        target: account.id,
      },
      'POST /admin/v1/keys': { path: '/admin/v1/keys', body: { account_id: account.id, scopes: ['chat'] }, action: 'key.create' },
      'PATCH /admin/v1/keys/:id': { path: `/admin/v1/keys/${key.id}`, body: { limits: { requests_per_minute: 5 } }, action: 'key.limits', target: key.id },
      'DELETE /admin/v1/keys/:id': { path: `/admin/v1/keys/${key.id}`, action: 'key.revoke', target: key.id },
      'POST /admin/v1/webhooks': { path: '/admin/v1/webhooks', body: { account_id: account.id, url: 'https://1.1.1.1/other' }, action: 'webhook.create' },
      'DELETE /admin/v1/webhooks/:id': { path: `/admin/v1/webhooks/${webhook.id}`, action: 'webhook.remove', target: webhook.id },
      'POST /admin/v1/users': { path: '/admin/v1/users', body: { email: 'op2@example.com', role: 'operator' }, action: 'user.create' },
      'POST /admin/v1/users/:id/password-reset': { path: `/admin/v1/users/${user.id}/password-reset`, action: 'user.password_reset_link', target: user.id },
      'DELETE /admin/v1/users/:id': { path: `/admin/v1/users/${user.id}`, action: 'user.remove', target: user.id },
      'POST /admin/v1/invitations': { path: '/admin/v1/invitations', body: { email: 'x@example.com', role: 'operator' }, action: 'invitation.create' },
      'DELETE /admin/v1/invitations/:id': { path: `/admin/v1/invitations/${invitation.id}`, action: 'invitation.revoke', target: invitation.id },
    };
    assert.ok(adminRoutes.length > 10, 'the routes were collected');
    assert.deepEqual(
      adminRoutes.filter((route) => !(route in cases)),
      [],
      'a mutating admin route without an audit case',
    );
    assert.deepEqual(Object.keys(cases).sort(), [...adminRoutes].sort(), 'each case is a route');
    // In the table's order, which removes things last.
    for (const [route, { path, body, action, target }] of Object.entries(cases)) {
      const seq = await lastSeq();
      const response = await admin(route.split(' ')[0]!, path, body);
      assert.equal(response.status, 200, `${route}: ${response.text}`);
      const rows = await actionsSince(seq);
      const row = rows.find((candidate) => candidate.action === action);
      assert.ok(row, `${route} wrote no '${action}' row (wrote ${rows.map((r) => r.action).join(', ') || 'nothing'})`);
      assert.equal(row.actor.kind, 'admin_key');
      assert.equal(row.source, '127.0.0.1');
      if (target) assert.equal(row.target?.id, target, route);
    }
    const update = (await gateway.store.listAudit({ action: 'account.update' }, { limit: 1 })).items[0]!;
    assert.deepEqual(update.changes, { rate: { before: null, after: '1.2' } }, 'only the changed field, before and after');
    const credit = (await gateway.store.listAudit({ action: 'credit.add', targetId: account.id }, { limit: 1 })).items[0]!;
    assert.deepEqual(credit.changes, { amount_usd: { after: '3' }, note: { after: 'top-up' }, balance_usd: { before: '0', after: '3' } });
    const keyRow = (await gateway.store.listAudit({ action: 'key.create' }, { limit: 1 })).items[0]!;
    assert.doesNotMatch(JSON.stringify(keyRow), /gateway_[A-Za-z0-9_-]{20}/, 'never the plaintext key');
    const hookRow = (await gateway.store.listAudit({ action: 'webhook.create' }, { limit: 1 })).items[0]!;
    assert.doesNotMatch(JSON.stringify(hookRow), /whsec_/, 'never the signing secret');
  });

  test('every command of the CLI that changes something writes its audit row, as the CLI', async () => {
    const env = gateway.cliEnv;
    const gatewayCli = async (...args: string[]) => {
      let stdout = '';
      let stderr = '';
      const code = await runCli([...args, '--json'], { env, stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
      assert.equal(code, 0, `gateway ${args.join(' ')}: ${stderr}`);
      return JSON.parse(stdout);
    };
    const account = await gatewayCli('accounts', 'create', 'cli account');
    const org = await gatewayCli('orgs', 'create', 'cli org');
    const key = await gatewayCli('keys', 'create', '--account', account.id);
    const webhook = await gatewayCli('webhooks', 'add', '--account', account.id, 'https://1.1.1.1/cli');
    const user = await gatewayCli('users', 'add', 'cli-member@example.com', '--account', account.id);
    const readOnly = new Set([
      'serve',
      'endpoints',
      'accounts list',
      'accounts show',
      'orgs list',
      'orgs show',
      'keys list',
      'usage',
      'webhooks list',
      'users list',
      'audit verify',
      'audit list',
    ]);
    const cases: Record<string, { args: string[]; action: string }> = {
      'accounts create': { args: ['accounts', 'create', 'another'], action: 'account.create' },
      'accounts update': { args: ['accounts', 'update', account.id, '--name', 'renamed'], action: 'account.update' },
      'orgs create': { args: ['orgs', 'create', 'another org'], action: 'organization.create' },
      'orgs update': { args: ['orgs', 'update', org.id, '--rate', '2'], action: 'organization.update' },
      'orgs set-limits': { args: ['orgs', 'set-limits', org.id, '--requests-per-minute', '9'], action: 'organization.limits' },
      'credit add': { args: ['credit', 'add', '--account', account.id, '4'], action: 'credit.add' },
      'consent set': { args: ['consent', 'set', '--account', account.id, '--training-use', 'true'], action: 'account.update' },
      'keys create': { args: ['keys', 'create', '--account', account.id], action: 'key.create' },
      'keys set-limits': { args: ['keys', 'set-limits', key.id, '--requests-per-minute', '3'], action: 'key.limits' },
      'keys revoke': { args: ['keys', 'revoke', key.id], action: 'key.revoke' },
      'webhooks add': { args: ['webhooks', 'add', '--account', account.id, 'https://1.1.1.1/two'], action: 'webhook.create' },
      'webhooks remove': { args: ['webhooks', 'remove', webhook.id], action: 'webhook.remove' },
      'users add': { args: ['users', 'add', 'cli-op@example.com', '--operator'], action: 'user.create' },
      'users reset-password': { args: ['users', 'reset-password', user.id], action: 'user.password_reset_link' },
      'users invite': { args: ['users', 'invite', 'cli-invitee@example.com', '--organization', org.id], action: 'invitation.create' },
      'users remove': { args: ['users', 'remove', user.id], action: 'user.remove' },
    };
    assert.deepEqual(
      COMMANDS.map((command) => command.name).filter((name) => !readOnly.has(name) && !(name in cases)),
      [],
      'a command that is neither read-only nor has an audit case',
    );
    for (const [name, { args, action }] of Object.entries(cases)) {
      const seq = await lastSeq();
      await gatewayCli(...args);
      const row = (await actionsSince(seq)).find((candidate) => candidate.action === action);
      assert.ok(row, `gateway ${name} wrote no '${action}' row`);
      assert.equal(row.actor.kind, 'cli');
      assert.equal(row.source, 'cli');
    }
    for (const name of readOnly) {
      // `serve` runs a server; `endpoints` asks a running server over HTTP, not the store.
      if (name === 'serve' || name === 'endpoints' || name === 'audit verify') continue;
      const seq = await lastSeq();
      const words = name.split(' ');
      const args = name === 'usage' ? ['usage', '--account', account.id] : name.endsWith('show') ? [...words, account.id] : words;
      if (name === 'orgs show') args[2] = org.id;
      await gatewayCli(...args);
      assert.equal(await lastSeq(), seq, `${name} reads only`);
    }
  });

  test('gateway audit verify accepts the chain, and names the first row changed behind its back', async () => {
    const env = gateway.cliEnv;
    const verify = async () => {
      let stdout = '';
      const code = await runCli(['audit', 'verify', '--json'], { env, stdout: (text) => (stdout += text), stderr: () => {} });
      return { code, report: JSON.parse(stdout) };
    };
    const good = await verify();
    assert.equal(good.code, 0);
    assert.equal(good.report.ok, true);
    assert.equal(good.report.rows, await lastSeq());

    // A forger with the file: the triggers refuse an edit, so they drop them first.
    const database = new DatabaseSync(join(dataDir, SQLITE_FILE_NAME));
    try {
      assert.throws(() => database.prepare(`UPDATE audit_log SET actor_label = 'someone else' WHERE seq = 3`).run(), /append-only/);
      assert.throws(() => database.prepare('DELETE FROM audit_log WHERE seq = 3').run(), /append-only/);
      database.exec('DROP TRIGGER audit_log_no_update');
      database.prepare(`UPDATE audit_log SET actor_label = 'someone else' WHERE seq = 3`).run();
    } finally {
      database.close();
    }
    const bad = await verify();
    assert.equal(bad.code, 1);
    assert.deepEqual({ ok: bad.report.ok, seq: bad.report.seq, verified: bad.report.rows_verified }, { ok: false, seq: 3, verified: 2 });
  });
});
