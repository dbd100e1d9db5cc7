/**
 * Webhook delivery end to end, on both engines: a real gateway (its dispatcher), a job ended in its
 * store as a job worker ends one, and real HTTP receivers on loopback that verify every delivery
 * with the `standardwebhooks` library, as a customer's receiver does.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { DEMO_CONFIG_PATH, loadConfigFile } from '../../src/config/load.ts';
import type { GatewayConfig, WebhooksConfig } from '../../src/config/schema.ts';
import { timeOrderedId } from '../../src/core/ids.ts';
import { readSettings } from '../../src/server/settings.ts';
import { openStore } from '../../src/storage/open-store.ts';
import type { JobRecord, JobStatus, OwnerRef, Store } from '../../src/storage/store.ts';
import { systemResolver } from '../../src/webhooks/addresses.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { metricValue } from '../helpers/metrics.ts';
import { startReceiver, until, type Receiver, type ReceivedRequest } from './receiver.ts';

const ADMIN_KEY = 'admin-secret-for-webhook-tests';

/** Fast polls and retries, loopback allowed: what a test needs, never what production runs. */
const FAST: WebhooksConfig = { allow_private_addresses: true, poll_interval_ms: 20, retry_base_ms: 20, retry_max_ms: 100, timeout_ms: 2_000 };

function configWith(webhooks: WebhooksConfig): GatewayConfig {
  return { ...loadConfigFile(DEMO_CONFIG_PATH), webhooks, jobs: { poll_interval_ms: 20 } };
}

/** A background response of `owner` that a worker has ended with `status`, as the worker does it. */
async function endResponse(store: Store, owner: OwnerRef, status: JobStatus = 'completed'): Promise<JobRecord> {
  const id = timeOrderedId('resp');
  const createdAt = Date.now();
  const response = (state: JobStatus) => ({
    id,
    object: 'response',
    created_at: Math.floor(createdAt / 1000),
    status: state,
    model: 'gateway/atlas-4-5',
    output: state === 'completed' ? [{ type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text: 'Hello!' }] }] : [],
  });
  // Created ended: a queued job would be claimed by the gateway's own workers before the test ends it.
  return store.createJob({
    id,
    kind: 'response',
    owner,
    keyId: 'key_webhooks',
    status,
    payload: null,
    result: response(status),
    reservationId: null,
    createdAt,
    expiresAt: createdAt + 86_400_000,
  });
}

/** Verifies one received request with the endpoint's secret; returns the event. */
function verified(secret: string, request: ReceivedRequest): any {
  return new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
}

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`webhook delivery (${engine})`, () => {
    let gateway: TestGateway;
    const receivers: Receiver[] = [];
    const admin = (method: string, path: string, json?: unknown) => call(gateway.baseUrl, method, path, { key: ADMIN_KEY, json });
    const receiver = async (...args: Parameters<typeof startReceiver>) => {
      const started = await startReceiver(...args);
      receivers.push(started);
      return started;
    };
    const register = async (owner: OwnerRef, url: string, eventTypes?: string[]) => {
      const field = owner.kind === 'account' ? 'account_id' : 'organization_id';
      const created = await admin('POST', '/admin/v1/webhooks', { [field]: owner.id, url, event_types: eventTypes });
      assert.equal(created.status, 200, created.text);
      return created.body as { id: string; secret: string };
    };
    const delivered = (job: JobRecord, count = 1) =>
      until(
        () => gateway.store.listWebhookDeliveries({ jobId: job.id }),
        (deliveries) => deliveries.length === count && deliveries.every((delivery) => delivery.status === 'delivered'),
      );

    before(async () => {
      gateway = await startGateway({ engine, adminKey: ADMIN_KEY, config: configWith(FAST) });
    });
    after(async () => {
      await gateway.close();
      await Promise.all(receivers.map((started) => started.close()));
    });

    test("an ended job reaches its owner's endpoint, signed; another owner's endpoint gets nothing", async () => {
      const owner: OwnerRef = { kind: 'account', id: gateway.account.id };
      const mine = await receiver();
      const theirs = await receiver();
      const endpoint = await register(owner, mine.url);
      const other = await admin('POST', '/admin/v1/accounts', { name: 'Other' });
      await register({ kind: 'account', id: other.body.id }, theirs.url);

      const job = await endResponse(gateway.store, owner);
      const [request] = await mine.waitFor(1);
      const event = verified(endpoint.secret, request);
      assert.deepEqual(event, {
        id: request.headers['webhook-id'],
        object: 'event',
        type: 'response.completed',
        created_at: Math.floor(job.updatedAt / 1000),
        data: job.result,
      });
      assert.match(String(request.headers['webhook-id']), /^evt_[0-9a-f]{32}$/);
      assert.equal(request.method, 'POST');
      assert.equal(request.path, '/hook');
      assert.equal(request.headers['content-type'], 'application/json');
      assert.match(request.headers['user-agent'] ?? '', /^gateway-webhooks\//);
      assert.match(String(request.headers['webhook-timestamp']), /^\d{10}$/);
      assert.match(String(request.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/);
      const forged = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
      assert.throws(() => verified(forged, request), /No matching signature/, 'another secret does not verify it');
      assert.throws(() => verified(endpoint.secret, { ...request, body: request.body.replace('completed', 'failed') }), /No matching signature/);

      const [delivery] = await delivered(job);
      assert.equal(delivery.endpointId, endpoint.id);
      assert.equal(delivery.attempts, 1);
      assert.equal(delivery.lastStatus, 200);
      assert.equal(theirs.received.length, 0, "the other owner's endpoint got nothing");
      assert.equal(mine.received.length, 1, 'delivered once');

      const metrics = await call(gateway.baseUrl, 'GET', '/metrics');
      assert.ok(metricValue(metrics.text, 'gateway_webhook_deliveries_total', { outcome: 'delivered' }) >= 1);
      assert.equal(metricValue(metrics.text, 'gateway_webhook_deliveries_pending'), 0);
    });

    test("a background response's end reaches the webhook with the Response object a GET returns", async () => {
      const owner: OwnerRef = { kind: 'account', id: gateway.account.id };
      const hooks = await receiver();
      const endpoint = await register(owner, hooks.url, ['response.completed']);
      const queued = await call(gateway.baseUrl, 'POST', '/v1/responses', {
        key: gateway.apiKey,
        json: { model: 'gateway/atlas-4-5', input: 'Hello from the background', background: true },
      });
      assert.equal(queued.status, 200, queued.text);
      assert.equal(queued.body.status, 'queued');

      const [request] = await hooks.waitFor(1);
      const event = verified(endpoint.secret, request);
      assert.equal(event.type, 'response.completed');
      assert.equal(event.data.id, queued.body.id);
      assert.equal(event.data.status, 'completed');
      const retrieved = await call(gateway.baseUrl, 'GET', `/v1/responses/${queued.body.id}`, { key: gateway.apiKey });
      assert.deepEqual(event.data, retrieved.body, 'the object a client retrieves');
      const job = await gateway.store.getJob(queued.body.id);
      assert.ok(job?.reservationId);
      assert.notEqual((await gateway.store.getReservation(job.reservationId))?.status, 'open', 'announced once its hold was charged');
    });

    test('a receiver that fails gets the same event again, until it answers 2xx', async () => {
      const owner: OwnerRef = { kind: 'account', id: gateway.account.id };
      const flaky = await receiver((index) => (index === 0 ? 500 : index === 1 ? 'hang' : 204));
      const organization = await admin('POST', '/admin/v1/organizations', { name: 'Flaky Org' });
      const orgOwner: OwnerRef = { kind: 'organization', id: organization.body.id };
      const endpoint = await register(orgOwner, flaky.url, ['response.failed']);
      await register(owner, (await receiver()).url, ['response.cancelled']);

      const job = await endResponse(gateway.store, orgOwner, 'failed');
      const requests = await flaky.waitFor(3);
      const ids = requests.map((request) => request.headers['webhook-id']);
      assert.equal(new Set(ids).size, 1, 'one webhook-id on every attempt');
      for (const request of requests) assert.equal(verified(endpoint.secret, request).type, 'response.failed');
      assert.deepEqual(
        requests.map((request) => request.body),
        [requests[0].body, requests[0].body, requests[0].body],
        'the same body',
      );

      const [delivery] = await delivered(job);
      assert.equal(delivery.attempts, 3, 'a 500, a timeout, then a 204');
      assert.equal(delivery.lastStatus, 204);
      const metrics = await call(gateway.baseUrl, 'GET', '/metrics');
      assert.ok(metricValue(metrics.text, 'gateway_webhook_deliveries_total', { outcome: 'retried' }) >= 2);
    });

    test('a delivery in flight when the gateway stops is cut short and left due at once', { timeout: 120_000 }, async () => {
      const hanging = await receiver(() => 'hang');
      const stopping = await startGateway({ engine, config: configWith({ ...FAST, timeout_ms: 600_000 }) });
      const observer = await openStore(readSettings(stopping.cliEnv));
      try {
        const owner: OwnerRef = { kind: 'account', id: stopping.account.id };
        await stopping.store.createWebhookEndpoint({ owner, url: hanging.url, secret: `whsec_${Buffer.alloc(24, 1).toString('base64')}`, eventTypes: null });
        const job = await endResponse(stopping.store, owner);
        await hanging.waitFor(1);
        // With a ten-minute attempt timeout, only cutting the attempt short lets the close finish.
        await stopping.runtime.close();
        const [delivery] = await observer.listWebhookDeliveries({ jobId: job.id });
        assert.equal(delivery.status, 'pending');
        assert.equal(delivery.attempts, 1);
        assert.equal(delivery.leaseOwner, null);
        assert.match(delivery.lastError ?? '', /stopped/);
        assert.ok(delivery.nextAttemptAt <= Date.now(), 'due again at once, for the next instance');
      } finally {
        await observer.close();
        await stopping.close();
      }
    });
  });
}

describe('webhook delivery to non-public addresses, when the config allows none', () => {
  let gateway: TestGateway;
  let target: Receiver;
  before(async () => {
    target = await startReceiver();
    // The resolver stands for a DNS answer that changed after the endpoint was registered.
    gateway = await startGateway({
      config: configWith({ poll_interval_ms: 20 }),
      webhookResolver: async (hostname) => (hostname === 'rebound.example.com' ? [{ address: '127.0.0.1', family: 4 }] : systemResolver(hostname)),
    });
  });
  after(async () => {
    await gateway.close();
    await target.close();
  });

  test('is refused at connection time, whatever the stored URL says: no request leaves', async () => {
    const owner: OwnerRef = { kind: 'account', id: gateway.account.id };
    const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    // Rows written straight into the store, as registration would have refused them.
    const urls = [
      target.url,
      `http://[::ffff:127.0.0.1]:${target.port}/hook`,
      `http://localhost:${target.port}/hook`,
      `http://rebound.example.com:${target.port}/hook`,
      `https://rebound.example.com:${target.port}/hook`,
    ];
    for (const url of urls) await gateway.store.createWebhookEndpoint({ owner, url, secret, eventTypes: null });

    const job = await endResponse(gateway.store, owner);
    const deliveries = await until(
      () => gateway.store.listWebhookDeliveries({ jobId: job.id }),
      (found) => found.length === urls.length && found.every((delivery) => delivery.attempts === 1 && delivery.leaseOwner === null),
    );
    for (const delivery of deliveries) {
      assert.equal(delivery.status, 'pending', 'due again later: the address may change');
      assert.equal(delivery.lastStatus, null);
      assert.match(delivery.lastError ?? '', /which is not a public address/);
    }
    const errors = deliveries.map((delivery) => delivery.lastError).join('\n');
    assert.match(errors, /'localhost' resolves to/);
    assert.equal(errors.match(/'rebound\.example\.com' resolves to 127\.0\.0\.1/g)?.length, 2, 'over http and over https');
    assert.equal(target.received.length, 0);
    const metrics = await call(gateway.baseUrl, 'GET', '/metrics');
    assert.equal(metricValue(metrics.text, 'gateway_webhook_deliveries_total', { outcome: 'retried' }), urls.length);
    assert.equal(metricValue(metrics.text, 'gateway_webhook_deliveries_pending'), urls.length);
  });
});
