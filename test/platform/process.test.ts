/**
 * The server as operators run it: `node src/main.ts` with environment variables, as a child process.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dump } from 'js-yaml';
import { DEMO_CONFIG_PATH, loadConfigFile } from '../../src/config/load.ts';
import { call } from '../helpers/http.ts';
import { runProcess, startProcess } from '../helpers/processes.ts';
import { fundedAccount, startServer } from '../helpers/servers.ts';

let workDir: string;
before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'gateway-process-'));
});
after(() => rm(workDir, { recursive: true, force: true }));

describe('invalid configuration', () => {
  const cases: [string, string, RegExp][] = [
    [
      'an unknown provider reference',
      'providers:\n  - { id: sim, kind: simulated }\nmodels:\n  - id: gateway/m\n    name: M\n    owned_by: x\n    category: LLM\n    type: chat\n    input_modalities: [text]\n    output_modalities: [text]\n    endpoints:\n      - { provider: nope, model: m, supply: first_party, training_use: never, pricing: { unit: per_1m_tokens, input_per_1m: 1, output_per_1m: 2 } }\n',
      /config error at \/models\/0\/endpoints\/0\/provider: unknown provider 'nope'/,
    ],
    ['a bad enum value', 'providers:\n  - { id: sim, kind: telepathy }\nmodels: []\n', /config error at \/providers\/0\/kind/],
    ['an unknown field', 'providers:\n  - { id: sim, kind: simulated, secret: x }\nmodels: []\n', /config error at \/providers\/0\/secret: unknown field/],
    ['a missing file', '', /config error at \/: cannot read config file/],
  ];
  for (const [name, yaml, expected] of cases) {
    test(`${name} stops the start with exit code 1 and the field's path`, async () => {
      const path = join(workDir, `${name.replace(/\W+/g, '-')}.yaml`);
      if (yaml) await writeFile(path, yaml);
      const result = await runProcess(['src/main.ts'], { GATEWAY_CONFIG: path, GATEWAY_DATA_DIR: join(workDir, 'unused'), PORT: '0' });
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.match(result.stderr, expected);
    });
  }

  test('a bad PORT is refused', async () => {
    const result = await runProcess(['src/main.ts'], { PORT: 'eighty', GATEWAY_DATA_DIR: join(workDir, 'unused') });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /PORT/);
  });
});

describe('first start', () => {
  test('prints one demo key that authenticates; a restart prints none; SIGTERM stops cleanly', async () => {
    const env = { PORT: '0', GATEWAY_DATA_DIR: join(workDir, 'first-start'), LOG_LEVEL: 'warn', GATEWAY_ADMIN_KEY: 'admin-secret-for-tests' };
    const first = startProcess(['src/main.ts'], env);
    try {
      const [, key] = await first.waitFor(/^\s+(gateway_[A-Za-z0-9_-]{43})\s*$/m);
      const [, baseUrl] = await first.waitFor(/curl (http:\/\/127\.0\.0\.1:\d+)\/v1\/models/);
      const models = await call(baseUrl, 'GET', '/v1/models', { key });
      assert.equal(models.status, 200, models.text);
      // Another last character (a key that already ends in 'A' must not stay itself).
      const altered = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
      assert.equal((await call(baseUrl, 'GET', '/v1/models', { key: altered })).status, 401);
      const accounts = await call(baseUrl, 'GET', '/admin/v1/accounts', { key: 'admin-secret-for-tests' });
      assert.equal(accounts.body.data.length, 1);
      const account = await call(baseUrl, 'GET', `/admin/v1/accounts/${accounts.body.data[0].id}`, { key: 'admin-secret-for-tests' });
      assert.equal(account.body.balance_usd, '10');
      assert.equal(
        first
          .output()
          .match(/gateway_[A-Za-z0-9_-]{43}/g)
          ?.filter((found) => found === key).length,
        2,
        'the key and the curl line',
      );
      // Beside it, the demo operator's one-time dashboard link, which leads to choosing a password.
      const [, link] = await first.waitFor(/^\s+(http:\/\/127\.0\.0\.1:\d+\/dashboard\/link\?token=[A-Za-z0-9_-]{43})\s*$/m);
      const linkPage = await fetch(link);
      assert.equal(linkPage.status, 200);
      assert.match(await linkPage.text(), /operator@demo\.invalid/);
    } finally {
      const stopped = await first.stop('SIGTERM');
      assert.equal(stopped.code, 0, stopped.stderr);
    }

    const second = startProcess(['src/main.ts'], { ...env, LOG_LEVEL: 'info' });
    try {
      await second.waitFor(/gateway listening/);
      assert.doesNotMatch(second.output(), /gateway_[A-Za-z0-9_-]{43}/);
      assert.doesNotMatch(second.output(), /dashboard\/link/, 'no second operator link');
    } finally {
      assert.equal((await second.stop('SIGINT')).code, 0);
    }
  });
});

describe('one server per data dir', () => {
  test('a second server on the same data dir is refused; the command line credits the running one, which spends it at once', async () => {
    const admin = 'admin-secret-for-tests';
    const env = { PORT: '0', GATEWAY_DATA_DIR: join(workDir, 'one-server'), LOG_LEVEL: 'warn', GATEWAY_ADMIN_KEY: admin };
    const first = startProcess(['src/main.ts'], env);
    try {
      const [, baseUrl] = await first.waitFor(/curl (http:\/\/127\.0\.0\.1:\d+)\/v1\/models/);

      // Refused with one plain line (no JSON log, no stack) and exit code 1, at any log level.
      for (const level of ['warn', 'info']) {
        const second = await runProcess(['src/main.ts'], { ...env, LOG_LEVEL: level });
        assert.equal(second.code, 1, second.stdout + second.stderr);
        assert.equal(second.stdout, '');
        assert.match(
          second.stderr,
          /^another gateway server is already running on \S+gateway\.sqlite: the embedded store serves one server process per file \(run several instances on PostgreSQL\)\n$/,
        );
      }

      // An account without credit is refused; credited from the command line in another process,
      // it is served by the running server, which holds wallets in memory, without a restart.
      const account = await call(baseUrl, 'POST', '/admin/v1/accounts', { key: admin, json: { name: 'credited elsewhere' } });
      const accountId: string = account.body.id;
      const issued = await call(baseUrl, 'POST', '/admin/v1/keys', { key: admin, json: { account_id: accountId } });
      const chat = () =>
        call(baseUrl, 'POST', '/v1/chat/completions', {
          key: issued.body.key,
          json: { model: 'gateway/atlas-4-5', messages: [{ role: 'user', content: 'Hi' }] },
        });
      assert.equal((await chat()).status, 402);
      const credited = await runProcess(['bin/gateway.js', 'credit', 'add', '--account', accountId, '10000', '--json'], env);
      assert.equal(credited.code, 0, credited.stderr);
      let answered = await chat();
      const deadline = Date.now() + 5_000;
      while (answered.status === 402 && Date.now() < deadline) answered = await chat();
      assert.equal(answered.status, 200, answered.text);
    } finally {
      assert.equal((await first.stop('SIGTERM')).code, 0);
    }
  });
});

describe('graceful stop', () => {
  test('SIGTERM lets a stream in flight finish, then exits 0', async () => {
    const config = loadConfigFile(DEMO_CONFIG_PATH);
    // Slow streams, so that the signal arrives mid-stream.
    const slow = { ...config, providers: config.providers.map((provider) => ({ ...provider, simulated: { chunk_delay_ms: 40 } })) };
    const configPath = join(workDir, 'slow.yaml');
    await writeFile(configPath, dump(slow));
    // A configured catalog: no demo account, so one is made through the admin API.
    const started = await startServer(configPath, { GATEWAY_DATA_DIR: join(workDir, 'graceful') });
    const server = started.process;
    try {
      const { key } = await fundedAccount(started, 'graceful');
      const { baseUrl } = started;
      const model = (await call(baseUrl, 'GET', '/v1/models', { key })).body.data.find((row: { category: string }) => row.category === 'LLM').id;
      const response = await fetch(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'Tell me a long story about graceful shutdowns.' }] }),
      });
      assert.equal(response.status, 200);
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let received = decoder.decode((await reader.read()).value);
      server.child.kill('SIGTERM');
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        received += decoder.decode(value);
      }
      assert.match(received, /data: \[DONE\]/);
      const stopped = await server.exited;
      assert.equal(stopped.code, 0, stopped.stderr);
    } finally {
      await server.stop('SIGKILL');
    }
  });
});
