/**
 * A job's end wakes the webhook dispatcher of its instance (src/server/compose.ts): with the
 * dispatcher's own poll ten minutes away, a background response's `response.completed` and a video
 * job's `video.completed` still arrive within moments of their end.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { DEMO_CONFIG_PATH, loadConfigFile } from '../../src/config/load.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { startReceiver, type Receiver } from './receiver.ts';

const ADMIN_KEY = 'admin-secret-for-wake-tests';

describe('a job that ends wakes the webhook dispatcher', () => {
  let gateway: TestGateway;
  let receiver: Receiver;
  let secret: string;
  before(async () => {
    const demo = loadConfigFile(DEMO_CONFIG_PATH);
    const config = {
      ...demo,
      providers: demo.providers.map((provider) => ({ ...provider, simulated: { chunk_delay_ms: 0, video_delay_ms: 0 } })),
      jobs: { poll_interval_ms: 20 },
      videos: { poll_interval_ms: 20 },
      webhooks: { allow_private_addresses: true, poll_interval_ms: 600_000 },
    };
    gateway = await startGateway({ config, adminKey: ADMIN_KEY });
    receiver = await startReceiver();
    const registered = await call(gateway.baseUrl, 'POST', '/admin/v1/webhooks', {
      key: ADMIN_KEY,
      json: { account_id: gateway.account.id, url: receiver.url },
    });
    assert.equal(registered.status, 200, registered.text);
    secret = registered.body.secret;
  });
  after(async () => {
    await gateway.close();
    await receiver.close();
  });

  test('a background response and a video job are announced at their end, not at the next poll', async () => {
    const response = await call(gateway.baseUrl, 'POST', '/v1/responses', {
      key: gateway.apiKey,
      json: { model: 'gateway/atlas-4-5', input: 'Say hi.', background: true },
    });
    assert.equal(response.status, 200, response.text);
    const video = await call(gateway.baseUrl, 'POST', '/v1/videos/generations', {
      key: gateway.apiKey,
      json: { model: 'gateway/reel-loop', prompt: 'a loop' },
    });
    assert.equal(video.status, 200, video.text);
    const received = await receiver.waitFor(2);
    const events = received.map(
      (request) => new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as { type: string; data: { id: string } },
    );
    assert.deepEqual(events.map((event) => [event.type, event.data.id]).sort(), [
      ['response.completed', response.body.id],
      ['video.completed', video.body.id],
    ]);
  });
});
