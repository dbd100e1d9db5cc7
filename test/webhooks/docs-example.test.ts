/**
 * The receiver of docs/webhooks.md ("Verifying deliveries"), run as written in a process of its own,
 * receives a gateway's delivery, verifies it with the `standardwebhooks` library and refuses a
 * forged one.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { test } from 'node:test';
import { DEMO_CONFIG_PATH, loadConfigFile } from '../../src/config/load.ts';
import { timeOrderedId } from '../../src/core/ids.ts';
import { startGateway } from '../helpers/gateway.ts';
import { startProcess } from '../helpers/processes.ts';

const markdown = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
const section = markdown.slice(markdown.indexOf('## Verifying deliveries'));
const receiverCode = section.match(/```js\n([\s\S]*?)```/)?.[1];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('the receiver of docs/webhooks.md verifies a delivery and refuses a forged one', { timeout: 180_000 }, async () => {
  assert.ok(receiverCode, 'docs/webhooks.md has the receiver');
  const gateway = await startGateway({
    adminKey: 'admin',
    config: { ...loadConfigFile(DEMO_CONFIG_PATH), webhooks: { allow_private_addresses: true, poll_interval_ms: 20 } },
  });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const registered = await fetch(`${gateway.baseUrl}/admin/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: 'Bearer admin', 'content-type': 'application/json' },
    body: JSON.stringify({ account_id: gateway.account.id, url }),
  });
  const { secret } = (await registered.json()) as { secret: string };
  // Bare imports of code run with --eval resolve from the working directory: the project's packages.
  const receiver = startProcess(['--input-type=module', '--eval', receiverCode], { GATEWAY_WEBHOOK_SECRET: secret, PORT: String(port) });
  try {
    await receiver.waitFor(/listening/);
    const forged = await fetch(url, {
      method: 'POST',
      headers: { 'webhook-id': 'evt_forged', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' },
      body: '{"type":"response.completed"}',
    });
    assert.equal(forged.status, 400);

    const id = timeOrderedId('resp');
    const now = Date.now();
    await gateway.store.createJob({
      id,
      kind: 'response',
      owner: { kind: 'account', id: gateway.account.id },
      keyId: 'key_docs',
      status: 'in_progress',
      payload: null,
      result: null,
      reservationId: null,
      createdAt: now,
      expiresAt: now + 86_400_000,
    });
    await gateway.store.transitionJob(id, ['in_progress'], { status: 'completed', result: { id, object: 'response', status: 'completed' }, now: Date.now() });
    await receiver.waitFor(new RegExp(`response\\.completed ${id}`));
  } finally {
    await receiver.stop();
    await gateway.close();
  }
});
