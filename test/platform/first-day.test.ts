/**
 * What a newcomer meets on the first day: the demo account only on the demo catalog, a config file of
 * operational settings only, a 402 that says what to do, a CLI run from another folder, the page at
 * `/`, and the 404 of a base URL with one `/v1` too many or too few.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dump } from 'js-yaml';
import { DEMO_CONFIG_PATH, loadConfigFile, loadServedConfig } from '../../src/config/load.ts';
import { webhookSettings } from '../../src/webhooks/settings.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { HUNG_AFTER_MS, runProcess, startProcess } from '../helpers/processes.ts';

let folder: string;
before(async () => {
  folder = await mkdtemp(join(tmpdir(), 'gateway-first-day-'));
});
after(() => rm(folder, { recursive: true, force: true }));

/** An operator's own catalog: one of the demo's models, on a provider of its own. */
const demoModel = loadConfigFile(DEMO_CONFIG_PATH).models.find((model) => model.id === 'gateway/quill-1-free')!;
const OWN_CATALOG = {
  providers: [{ id: 'local', kind: 'simulated' }],
  models: [{ ...demoModel, id: 'gateway/own-model', aliases: [], endpoints: demoModel.endpoints.map((endpoint) => ({ ...endpoint, provider: 'local' })) }],
};

describe('the served config', () => {
  test('without GATEWAY_CONFIG, the demo catalog', () => {
    const served = loadServedConfig(undefined);
    assert.equal(served.demoCatalog, true);
    assert.deepEqual(served.config, loadConfigFile(DEMO_CONFIG_PATH));
  });

  test('a file of operational sections only tunes the demo catalog', async () => {
    const path = join(folder, 'operational.yaml');
    await writeFile(path, dump({ webhooks: { allow_private_addresses: true }, jobs: { concurrency: 2 } }));
    const served = loadServedConfig(path);
    assert.equal(served.demoCatalog, true);
    assert.deepEqual(served.config.models, loadConfigFile(DEMO_CONFIG_PATH).models);
    assert.equal(webhookSettings(served.config).allowPrivateAddresses, true);
    assert.equal(served.config.jobs?.concurrency, 2);
  });

  test('an operational section with a bad field is still named by its path', async () => {
    const path = join(folder, 'bad-operational.yaml');
    await writeFile(path, dump({ webhooks: { allow_private_adresses: true } }));
    assert.throws(() => loadServedConfig(path), /\/webhooks\/allow_private_adresses: unknown field/);
  });

  test('a file with a catalog is served as it is', async () => {
    const path = join(folder, 'own.yaml');
    await writeFile(path, dump(OWN_CATALOG));
    const served = loadServedConfig(path);
    assert.equal(served.demoCatalog, false);
    assert.deepEqual(
      served.config.models.map((model) => model.id),
      ['gateway/own-model'],
    );
  });
});

describe('first start with a configured catalog', () => {
  test('creates no demo account and says how to create the first account and key', async () => {
    const dataDir = join(folder, 'configured-data');
    const configPath = join(folder, 'first-start.yaml');
    await writeFile(configPath, dump(OWN_CATALOG));
    const server = startProcess(['src/main.ts'], { GATEWAY_DATA_DIR: dataDir, GATEWAY_CONFIG: configPath, PORT: '0' });
    try {
      await server.waitFor(/"url":"http:\/\/127\.0\.0\.1:\d+"/);
      const [line] = await server.waitFor(/no account yet[^\n]*/);
      assert.match(line, /gateway accounts create/);
      assert.match(line, /gateway keys create --account/);
      assert.doesNotMatch(server.output(), /gateway_[A-Za-z0-9_-]{43}/, 'no key printed');
    } finally {
      await server.stop();
    }
    const listed = await runProcess(['bin/gateway.js', 'accounts', 'list', '--json'], { GATEWAY_DATA_DIR: dataDir });
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(JSON.parse(listed.stdout).data, []);
  });
});

describe('the gateway command run from another folder', () => {
  test('finds no database there, says where it looked, and creates none', async () => {
    const elsewhere = join(folder, 'elsewhere');
    await mkdir(elsewhere);
    const result = await runProcess(['bin/gateway.js', 'accounts', 'list'], {}, HUNG_AFTER_MS, elsewhere);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /no gateway database found \(looked for .*elsewhere\/data\/gateway\.sqlite/);
    assert.match(result.stderr, /GATEWAY_DATA_DIR/);
    assert.deepEqual(await readdir(elsewhere), [], 'nothing created');
  });

  test("opens the folder's ./data when a server keeps its database there", async () => {
    const install = join(folder, 'install');
    const prepared = await runProcess(['bin/gateway.js', 'accounts', 'create', 'Acme', '--json'], { GATEWAY_DATA_DIR: join(install, 'data') });
    assert.equal(prepared.code, 0, prepared.stderr);
    const listed = await runProcess(['bin/gateway.js', 'accounts', 'list', '--json'], {}, HUNG_AFTER_MS, install);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(
      JSON.parse(listed.stdout).data.map((account: { name: string }) => account.name),
      ['Acme'],
    );
    assert.ok(existsSync(join(install, 'data', 'gateway.sqlite')));
  });
});

describe('first requests', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({ creditUsd: '0.000001' });
  });
  after(() => gateway.close());

  test('a 402 says the balance, the amount the request needed, and how credit is added', async () => {
    const response = await call(gateway.baseUrl, 'POST', '/v1/chat/completions', {
      key: gateway.apiKey,
      json: { model: 'gateway/atlas-4-5', messages: [{ role: 'user', content: 'hi' }] },
    });
    assert.equal(response.status, 402, response.text);
    const message: string = response.body.error.message;
    const [, needed, available] = message.match(/needs (\d+(?:\.\d+)?) USD held .* available balance is (\d+(?:\.\d+)?) USD/) ?? [];
    assert.ok(needed && available, message);
    assert.equal(available, '0.000001');
    assert.ok(Number(needed) > Number(available));
    assert.match(message, /gateway credit add/);
  });

  test('GET / leads to the dashboard, whose sign-in page points at the API description', async () => {
    const response = await fetch(`${gateway.baseUrl}/`);
    assert.equal(response.status, 200);
    assert.equal(new URL(response.url).pathname, '/dashboard/sign-in');
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    const page = await response.text();
    assert.match(page, /href="\/openapi\.json"/);
    assert.match(page, /\/v1/);
  });

  test('a 404 names the likely base-URL mistake', async () => {
    const json = { model: 'gateway/atlas-4-5', messages: [{ role: 'user', content: 'hi' }] };
    const doubled = await call(gateway.baseUrl, 'POST', '/v1/v1/chat/completions', { key: gateway.apiKey, json });
    assert.equal(doubled.status, 404);
    assert.match(doubled.body.error.message, /\/v1 twice/);
    const anthropic = await call(gateway.baseUrl, 'POST', '/v1/v1/messages', { key: gateway.apiKey, json });
    assert.match(anthropic.body.error.message, /\/v1 twice/);
    const missing = await call(gateway.baseUrl, 'POST', '/chat/completions', { key: gateway.apiKey, json });
    assert.equal(missing.status, 404);
    assert.match(missing.body.error.message, /Did you mean \/v1\/chat\/completions\?/);
    const unknown = await call(gateway.baseUrl, 'GET', '/v1/nothing-here', { key: gateway.apiKey });
    assert.equal(unknown.body.error.message, 'Unknown path GET /v1/nothing-here.');
  });
});
