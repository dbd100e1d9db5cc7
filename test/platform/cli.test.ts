/**
 * The `gateway` command through its bin shim, against a throwaway SQLite data dir, and its changes
 * seen by a server on the same database.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { call } from '../helpers/http.ts';
import { runCli } from '../../src/cli/run.ts';
import { runProcess, startProcess } from '../helpers/processes.ts';

let dataDir: string;
let env: Record<string, string>;
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'gateway-cli-'));
  env = { GATEWAY_DATA_DIR: dataDir };
});
after(() => rm(dataDir, { recursive: true, force: true }));

/** Through the bin shim, as an operator types it. */
async function gateway(...args: string[]) {
  const result = await runProcess(['bin/gateway.js', ...args], env);
  return { ...result, json: () => JSON.parse(result.stdout) };
}

/** The same command line in this process (faster; for the cases the shim adds nothing to). */
async function gatewayInProcess(...args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, { env, stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
  return { code, stdout, stderr, json: () => JSON.parse(stdout) };
}

describe('gateway CLI', () => {
  test('--help lists the commands', async () => {
    const help = await gateway('--help');
    assert.equal(help.code, 0);
    for (const command of ['serve', 'accounts create', 'orgs create', 'keys create', 'keys revoke', 'credit add', 'consent set', 'usage']) {
      assert.match(help.stdout, new RegExp(`\\b${command}\\b`));
    }
    const keysHelp = await gateway('keys', 'create', '--help');
    assert.match(keysHelp.stdout, /--account ID \| --organization ID/);
  });

  test('account, credit, key, consent, revoke', async () => {
    const account = (await gateway('accounts', 'create', 'Acme', '--json')).json();
    assert.equal(account.name, 'Acme');
    assert.equal(account.balance_usd, '0');

    const credit = await gateway('credit', 'add', '--account', account.id, '25.50', '--json');
    assert.equal(credit.code, 0, credit.stderr);
    assert.equal(credit.json().balance_usd, '25.5');

    const created = await gateway('keys', 'create', '--account', account.id, '--scopes', 'chat,models:read', '--name', 'ci');
    assert.equal(created.code, 0, created.stderr);
    const plaintext = created.stdout.match(/gateway_[A-Za-z0-9_-]{43}/)?.[0];
    assert.ok(plaintext, created.stdout);
    assert.match(created.stdout, /shown only this once/);

    const consent = await gatewayInProcess('consent', 'set', '--account', account.id, '--community-supply', 'true', '--json');
    assert.equal(consent.json().community_supply, true);
    assert.equal(consent.json().training_use, false);

    const shown = await gatewayInProcess('accounts', 'show', account.id);
    assert.match(shown.stdout, /balance_usd\s+25\.5/);

    const keys = (await gatewayInProcess('keys', 'list', '--account', account.id, '--json')).json();
    assert.equal(keys.data.length, 1);
    assert.equal(keys.data[0].key, undefined);
    assert.deepEqual(keys.data[0].scopes, ['chat', 'models:read']);

    const revoked = await gateway('keys', 'revoke', keys.data[0].id, '--json');
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(typeof revoked.json().revoked_at, 'number');

    const usage = await gatewayInProcess('usage', '--account', account.id);
    assert.equal(usage.code, 0, usage.stderr);
    assert.match(usage.stdout, /TOTAL\s+0/);
  });

  test('organizations and their keys', async () => {
    const organization = (await gatewayInProcess('orgs', 'create', 'Org', '--training-use', 'true', '--json')).json();
    assert.equal(organization.training_use, true);
    const account = (await gatewayInProcess('accounts', 'create', '--name', 'Member', '--organization', organization.id, '--json')).json();
    assert.equal(account.organization_id, organization.id);
    const key = (await gatewayInProcess('keys', 'create', '--organization', organization.id, '--json')).json();
    assert.equal(key.organization_id, organization.id);
    const list = await gatewayInProcess('orgs', 'list');
    assert.match(list.stdout, new RegExp(organization.id));
  });

  test('mistakes: exit code 2 for the command line, 1 for the operation', async () => {
    assert.equal((await gatewayInProcess('nonsense')).code, 2);
    assert.equal((await gatewayInProcess('accounts', 'create')).code, 2);
    assert.equal((await gatewayInProcess('accounts', 'list', '--bogus')).code, 2);
    assert.equal((await gatewayInProcess('consent', 'set', '--account', 'x', '--training-use', 'maybe')).code, 2);
    const missing = await gatewayInProcess('credit', 'add', '--account', 'acct_missing', '5');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /not found/);
    const badAmount = await gatewayInProcess('credit', 'add', '--account', 'acct_missing', '5.0000000000001');
    assert.equal(badAmount.code, 1);
    assert.match(badAmount.stderr, /decimal/);
  });
});

describe('CLI and a running server share the database', () => {
  test('a key revoked by the CLI stops working on the server within the polling interval', async () => {
    const serverEnv = { ...env, PORT: '0', LOG_LEVEL: 'info' };
    const server = startProcess(['src/main.ts'], serverEnv);
    try {
      const [, baseUrl] = await server.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/);
      const account = (await gatewayInProcess('accounts', 'create', 'Live', '--json')).json();
      const key = (await gatewayInProcess('keys', 'create', '--account', account.id, '--json')).json();
      const before = await call(baseUrl, 'GET', '/v1/models', { key: key.key });
      assert.equal(before.status, 200, before.text);
      await gatewayInProcess('keys', 'revoke', key.id);
      let status = 200;
      for (let attempt = 0; attempt < 100 && status === 200; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        status = (await call(baseUrl, 'GET', '/v1/models', { key: key.key })).status;
      }
      assert.equal(status, 401);
    } finally {
      await server.stop();
    }
  });
});

