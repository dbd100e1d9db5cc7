/** `gateway webhooks add|list|remove`, in process, against a throwaway SQLite data dir. */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dump } from 'js-yaml';
import { runCli } from '../../src/cli/run.ts';
import { DEMO_CONFIG_PATH, loadConfigFile } from '../../src/config/load.ts';

let dataDir: string;
/** The environment of an operator whose config allows private addresses. */
let allowing: Record<string, string>;
/** One without GATEWAY_CONFIG: public addresses only. */
let strict: Record<string, string>;

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'gateway-webhooks-cli-'));
  const configPath = join(dataDir, 'config.yaml');
  await writeFile(configPath, dump({ ...loadConfigFile(DEMO_CONFIG_PATH), webhooks: { allow_private_addresses: true } }));
  strict = { GATEWAY_DATA_DIR: dataDir };
  allowing = { ...strict, GATEWAY_CONFIG: configPath };
});
after(() => rm(dataDir, { recursive: true, force: true }));

async function gateway(env: Record<string, string>, ...args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, { env, stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
  return { code, stdout, stderr, json: () => JSON.parse(stdout) };
}

describe('gateway webhooks', () => {
  test('add prints the secret once; list never shows it; remove deletes', async () => {
    const account = (await gateway(strict, 'accounts', 'create', 'Hooked', '--json')).json();
    const added = await gateway(
      allowing,
      'webhooks',
      'add',
      '--account',
      account.id,
      'http://127.0.0.1:9000/hook',
      '--event-types',
      'response.completed,response.failed',
    );
    assert.equal(added.code, 0, added.stderr);
    const secret = added.stdout.match(/whsec_[A-Za-z0-9+/]{43}=/)?.[0];
    assert.ok(secret, added.stdout);
    assert.match(added.stdout, /^url\s+http:\/\/127\.0\.0\.1:9000\/hook$/m);
    assert.match(added.stdout, /^event_types\s+response\.completed,response\.failed$/m);
    assert.match(added.stdout, /shown only this once/);
    const id = added.stdout.match(/^id\s+(wh_\S+)$/m)?.[1];
    assert.ok(id, added.stdout);

    const json = await gateway(strict, 'webhooks', 'add', '--account', account.id, 'https://93.184.216.34/other', '--json');
    assert.equal(json.code, 0, json.stderr);
    assert.equal(json.json().event_types, null);
    assert.match(json.json().secret, /^whsec_/);
    assert.doesNotMatch(json.stdout, /shown only this once/, 'notes are for people, not --json');

    const table = await gateway(strict, 'webhooks', 'list', '--account', account.id);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^ID\s+ACCOUNT_ID\s+ORGANIZATION_ID\s+URL\s+EVENT_TYPES\s+CREATED_AT$/m);
    assert.match(
      table.stdout,
      new RegExp(`^${id}\\s+${account.id}\\s+-\\s+http://127\\.0\\.0\\.1:9000/hook\\s+response\\.completed,response\\.failed\\s`, 'm'),
    );
    assert.doesNotMatch(table.stdout, /whsec_/);
    const listed = (await gateway(strict, 'webhooks', 'list', '--json')).json();
    assert.deepEqual(
      listed.data.map((endpoint: { id: string }) => endpoint.id),
      [id, json.json().id],
    );
    assert.doesNotMatch(JSON.stringify(listed), /whsec_/);

    const removed = await gateway(strict, 'webhooks', 'remove', id!, '--json');
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(removed.json().deleted, true);
    const again = await gateway(strict, 'webhooks', 'remove', id!);
    assert.equal(again.code, 1);
    assert.match(again.stderr, new RegExp(`Webhook endpoint '${id}' not found`));
  });

  test('a non-public URL without the config that allows it, an unknown event type, a wrong command line', async () => {
    const account = (await gateway(strict, 'accounts', 'create', 'Refused', '--json')).json();
    const loopback = await gateway(strict, 'webhooks', 'add', '--account', account.id, 'http://localhost:9000/hook');
    assert.equal(loopback.code, 1);
    assert.match(loopback.stderr, /'localhost' resolves to .*which is not a public address.*webhooks\.allow_private_addresses/);
    const unknown = await gateway(strict, 'webhooks', 'add', '--account', account.id, 'https://93.184.216.34/', '--event-types', 'response.done');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /Unknown event type 'response\.done'/);
    const noOwner = await gateway(strict, 'webhooks', 'add', 'https://93.184.216.34/');
    assert.equal(noOwner.code, 2);
    assert.match(noOwner.stderr, /missing --account or --organization/);
    const noUrl = await gateway(strict, 'webhooks', 'add', '--account', account.id);
    assert.equal(noUrl.code, 2);
    assert.match(noUrl.stderr, /missing <url>/);
    assert.deepEqual((await gateway(strict, 'webhooks', 'list', '--account', account.id, '--json')).json().data, []);
  });
});
