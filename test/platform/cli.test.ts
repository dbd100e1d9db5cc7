/**
 * The `gateway` command through its bin shim, against a throwaway SQLite data dir, and its changes
 * seen by a server on the same database.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../chat/helpers.ts';
import { call } from '../helpers/http.ts';
import { runCli } from '../../src/cli/run.ts';
import { PROJECT_ROOT, runProcess, startProcess } from '../helpers/processes.ts';

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
    for (const command of ['serve', 'accounts create', 'orgs create', 'keys create', 'keys revoke', 'credit add', 'consent set', 'usage', 'webhooks add']) {
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

  test('accounts list and update', async () => {
    const account = (await gatewayInProcess('accounts', 'create', 'Listed', '--json')).json();
    const listed = await gatewayInProcess('accounts', 'list', '--json');
    assert.equal(listed.code, 0, listed.stderr);
    const row = listed.json().data.find((entry: { id: string }) => entry.id === account.id);
    assert.equal(row?.name, 'Listed');
    const table = await gatewayInProcess('accounts', 'list');
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^ID\s+NAME\s+ORGANIZATION_ID/);
    assert.match(table.stdout, new RegExp(`^${account.id}\\s+Listed\\s`, 'm'));

    const updated = await gateway('accounts', 'update', account.id, '--name', 'Renamed', '--training-use', 'true', '--rate', '1.2', '--json');
    assert.equal(updated.code, 0, updated.stderr);
    assert.equal(updated.json().name, 'Renamed');
    assert.equal(updated.json().training_use, true);
    assert.equal(updated.json().community_supply, false);
    assert.equal(updated.json().rate, '1.2');
    const shown = (await gatewayInProcess('accounts', 'show', account.id, '--json')).json();
    assert.equal(shown.name, 'Renamed');
    assert.equal(shown.rate, '1.2');
  });

  test('orgs show and update, credit for an organization', async () => {
    const organization = (await gatewayInProcess('orgs', 'create', 'Shown', '--rate', '1.3', '--json')).json();
    assert.equal(organization.rate, '1.3');

    const credit = await gateway('credit', 'add', '--organization', organization.id, '7.25', '--note', 'invoice 42', '--json');
    assert.equal(credit.code, 0, credit.stderr);
    assert.equal(credit.json().organization_id, organization.id);
    assert.equal(credit.json().account_id, null);
    assert.equal(credit.json().amount_usd, '7.25');
    assert.equal(credit.json().balance_usd, '7.25');

    const shown = await gatewayInProcess('orgs', 'show', organization.id);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /name\s+Shown/);
    assert.match(shown.stdout, /rate\s+1\.3/);
    assert.match(shown.stdout, /balance_usd\s+7\.25/);

    const updated = await gatewayInProcess('orgs', 'update', organization.id, '--community-supply', 'true', '--json');
    assert.equal(updated.code, 0, updated.stderr);
    assert.equal(updated.json().community_supply, true);
    assert.equal(updated.json().rate, '1.3', 'a flag left out leaves its field alone');
    assert.equal(updated.json().balance_usd, '7.25');
    const reset = await gatewayInProcess('orgs', 'update', organization.id, '--rate', 'default', '--json');
    assert.equal(reset.code, 0, reset.stderr);
    assert.equal(reset.json().rate, null);
    assert.equal(reset.json().community_supply, true);
    assert.equal((await gatewayInProcess('orgs', 'show', organization.id, '--json')).json().rate, null);

    const missing = await gatewayInProcess('orgs', 'show', 'org_missing');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /not found/);
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

describe('gateway serve', () => {
  test('starts on a free port with the runtime flags of npm start, answers /healthz and stops on SIGTERM', async () => {
    // The flag wins over PORT, which on its own would be refused at start.
    const server = startProcess(['bin/gateway.js', 'serve', '--port', '0'], { ...env, PORT: 'not-a-port', LOG_LEVEL: 'info', MALLOC_ARENA_MAX: '7' });
    try {
      const [line, baseUrl] = await server.waitFor(/\{[^\n]*"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*\}/);
      const { scripts } = JSON.parse(await readFile(join(PROJECT_ROOT, 'package.json'), 'utf8'));
      const words = (scripts.start as string).split(/\s+/);
      const startFlags = words.filter((word) => word.startsWith('--'));
      assert.ok(startFlags.length > 0, scripts.start);
      assert.deepEqual(JSON.parse(line).nodeFlags, startFlags);
      // The script's environment reaches the server too, whatever the caller's says.
      const arenas = words.find((word) => word.startsWith('MALLOC_ARENA_MAX='))?.split('=')[1];
      assert.ok(arenas !== undefined, scripts.start);
      assert.equal(JSON.parse(line).mallocArenaMax, arenas);
      // The compile cache of npm start, a folder of the project wherever the command runs from.
      assert.ok(String(JSON.parse(line).compileCache).startsWith(join(PROJECT_ROOT, 'node_modules', '.cache', 'node-compile')), line);
      const health = await call(baseUrl, 'GET', '/healthz');
      assert.equal(health.status, 200, health.text);
    } finally {
      await server.stop();
    }
    const finished = await server.exited;
    assert.equal(finished.code, 0, finished.stdout + finished.stderr);
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
      await eventually(async () => assert.equal((await call(baseUrl, 'GET', '/v1/models', { key: key.key })).status, 401));
    } finally {
      await server.stop();
    }
  });
});

describe('exit codes of every command, through the bin shim', () => {
  test('each command exits 0 when it succeeds (with --json) and 1 or 2 when it fails', async () => {
    const succeeds = async (...args: string[]) => {
      const result = await gateway(...args, '--json');
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      return result.json();
    };
    const organization = await succeeds('orgs', 'create', 'Exit codes');
    await succeeds('orgs', 'list');
    await succeeds('orgs', 'show', organization.id);
    await succeeds('orgs', 'update', organization.id, '--rate', '1.1');
    const account = await succeeds('accounts', 'create', 'Exit codes');
    await succeeds('accounts', 'list');
    await succeeds('accounts', 'show', account.id);
    await succeeds('accounts', 'update', account.id, '--name', 'Renamed');
    await succeeds('credit', 'add', '--account', account.id, '5');
    await succeeds('consent', 'set', '--account', account.id, '--training-use', 'true');
    const key = await succeeds('keys', 'create', '--account', account.id);
    await succeeds('keys', 'list', '--account', account.id);
    await succeeds('keys', 'revoke', key.id);
    const usage = await succeeds('usage', '--account', account.id);
    assert.equal(usage.total.requests, 0);
    const webhook = await succeeds('webhooks', 'add', '--account', account.id, 'https://93.184.216.34/hook');
    await succeeds('webhooks', 'list', '--account', account.id);
    await succeeds('webhooks', 'remove', webhook.id);

    const failures: [string[], number][] = [
      [['serve', '--port', 'not-a-port'], 1],
      [['serve', '--bogus'], 2],
      [['orgs', 'create'], 2],
      [['orgs', 'list', 'extra'], 2],
      [['orgs', 'show', 'org_missing'], 1],
      [['orgs', 'update', 'org_missing', '--name', 'x'], 1],
      [['accounts', 'create', 'x', '--rate', 'cheap'], 1],
      [['accounts', 'list', '--bogus'], 2],
      [['accounts', 'show', 'acct_missing'], 1],
      [['accounts', 'update', 'acct_missing', '--name', 'x'], 1],
      [['credit', 'add', '--account', 'acct_missing', '5'], 1],
      [['consent', 'set', '--account', account.id], 2],
      [['keys', 'create', '--account', 'acct_missing'], 1],
      [['keys', 'list', '--account', 'a', '--organization', 'o'], 2],
      [['keys', 'revoke', 'key_missing'], 1],
      [['usage', '--account', 'acct_missing', '--json'], 1],
      [['usage'], 2],
      [['webhooks', 'add', 'https://93.184.216.34/hook'], 2],
      [['webhooks', 'add', '--account', account.id, 'http://127.0.0.1/hook'], 1],
      [['webhooks', 'remove', 'wh_missing'], 1],
      [['nonsense'], 2],
    ];
    const results = await Promise.all(failures.map(([args]) => gateway(...args)));
    failures.forEach(([args, code], index) => {
      assert.equal(results[index].code, code, `${args.join(' ')}: ${results[index].stderr}`);
      assert.notEqual(results[index].stderr, '', args.join(' '));
    });
  });
});

describe('command-line mistakes in plain words', () => {
  test('a negative amount, a missing value, an unknown option, options before the command', async () => {
    const cases: [string[], RegExp][] = [
      [['credit', 'add', '--account', 'acct_x', '-5'], /^gateway credit add: negative amounts are not accepted \('-5'\)\n/],
      [['credit', 'add', '--account', 'acct_x', '-0.5'], /^gateway credit add: negative amounts are not accepted \('-0\.5'\)\n/],
      [['credit', 'add', '5', '--account'], /^gateway credit add: --account needs a value\n/],
      [['credit', 'add', '--account', '-5'], /^gateway credit add: --account needs a value\n/],
      [['accounts', 'create', '-n', 'x'], /^gateway accounts create: unknown option '-n'\n/],
      [['accounts', 'list', '--json=yes'], /^gateway accounts list: --json takes no value\n/],
      [['--json', 'accounts', 'list'], /^gateway: options go after the command: gateway accounts list --json\n/],
      [['usage', 'acct_x'], /^gateway usage: unexpected argument 'acct_x'/],
    ];
    for (const [args, expected] of cases) {
      const result = await gatewayInProcess(...args);
      assert.equal(result.code, 2, args.join(' '));
      assert.match(result.stderr, expected);
      assert.doesNotMatch(result.stderr, /positional/, args.join(' '));
    }
  });
});

describe('--allowed-models is checked against the catalog the server serves', () => {
  let ownDir: string;
  let ownEnv: Record<string, string>;
  before(async () => {
    ownDir = await mkdtemp(join(tmpdir(), 'gateway-cli-models-'));
    ownEnv = { GATEWAY_DATA_DIR: ownDir };
  });
  after(() => rm(ownDir, { recursive: true, force: true }));

  const run = async (args: string[], extraEnv: Record<string, string> = {}) => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(args, { env: { ...ownEnv, ...extraEnv }, stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
    return { code, stdout, stderr };
  };

  test('before any server started: refused without GATEWAY_CONFIG; after a start with another config: its models, not the demo', async () => {
    const account = JSON.parse((await run(['accounts', 'create', 'Models', '--json'])).stdout);
    const refused = await run(['keys', 'create', '--account', account.id, '--allowed-models', 'gateway/atlas-4-5']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /no server has started on this database yet/);

    const configPath = join(ownDir, 'custom.yaml');
    await writeFile(
      configPath,
      dump({
        providers: [{ id: 'sim', kind: 'simulated' }],
        models: [
          {
            id: 'gateway/custom-7',
            name: 'Custom',
            owned_by: 'tests',
            category: 'LLM',
            type: 'chat',
            input_modalities: ['text'],
            output_modalities: ['text'],
            endpoints: [
              {
                provider: 'sim',
                model: 'm',
                supply: 'first_party',
                training_use: 'never',
                pricing: { unit: 'per_1m_tokens', input_per_1m: 1, output_per_1m: 2 },
              },
            ],
          },
        ],
      }),
    );
    const server = startProcess(['src/main.ts'], { ...ownEnv, GATEWAY_CONFIG: configPath, PORT: '0', LOG_LEVEL: 'info' });
    try {
      await server.waitFor(/"msg":"gateway listening"/);
    } finally {
      await server.stop();
    }

    // The command runs without GATEWAY_CONFIG, as an operator's shell often does.
    const custom = await run(['keys', 'create', '--account', account.id, '--allowed-models', 'custom-7', '--json']);
    assert.equal(custom.code, 0, custom.stderr);
    assert.deepEqual(JSON.parse(custom.stdout).allowed_models, ['gateway/custom-7'], 'an alias resolves to the id');
    const demo = await run(['keys', 'create', '--account', account.id, '--allowed-models', 'gateway/atlas-4-5']);
    assert.equal(demo.code, 1);
    assert.match(demo.stderr, /Unknown model 'gateway\/atlas-4-5'/);
  });
});
