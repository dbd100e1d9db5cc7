/** The webhook endpoints of the admin API (POST, GET, DELETE /admin/v1/webhooks), on both engines. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEMO_CONFIG_PATH, loadConfigFile } from '../../src/config/load.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';

const ADMIN_KEY = 'admin-secret-for-webhook-tests';
/** A public address written out, so that no test needs DNS. */
const PUBLIC_URL = 'https://93.184.216.34/hooks/gateway';

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`admin API: webhooks (${engine})`, () => {
    let gateway: TestGateway;
    const admin = (method: string, path: string, json?: unknown) => call(gateway.app, method, path, { key: ADMIN_KEY, json });

    before(async () => {
      gateway = await startGateway({ engine, adminKey: ADMIN_KEY });
    });
    after(() => gateway.close());

    test('register, list without the secret, remove', async () => {
      const created = await admin('POST', '/admin/v1/webhooks', { account_id: gateway.account.id, url: PUBLIC_URL });
      assert.equal(created.status, 200, created.text);
      assert.match(created.body.id, /^wh_[0-9a-z]+$/);
      assert.equal(created.body.object, 'webhook_endpoint');
      assert.equal(created.body.account_id, gateway.account.id);
      assert.equal(created.body.organization_id, null);
      assert.equal(created.body.url, PUBLIC_URL);
      assert.equal(created.body.event_types, null, 'every event type');
      assert.equal(typeof created.body.created_at, 'number');
      assert.match(created.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.equal(Buffer.from(created.body.secret.slice('whsec_'.length), 'base64').length, 32);

      const organization = await admin('POST', '/admin/v1/organizations', { name: 'Hooked' });
      const filtered = await admin('POST', '/admin/v1/webhooks', {
        organization_id: organization.body.id,
        url: 'HTTPS://93.184.216.34:8443',
        event_types: ['response.failed', 'video.completed', 'response.failed'],
      });
      assert.equal(filtered.status, 200, filtered.text);
      assert.equal(filtered.body.url, 'https://93.184.216.34:8443/', 'as the URL parser writes it');
      assert.deepEqual(filtered.body.event_types, ['response.failed', 'video.completed']);
      assert.notEqual(filtered.body.secret, created.body.secret);

      const mine = await admin('GET', `/admin/v1/webhooks?account_id=${gateway.account.id}`);
      assert.equal(mine.status, 200);
      assert.equal(mine.body.object, 'list');
      const { secret: _secret, ...listed } = created.body;
      assert.deepEqual(mine.body.data, [listed], 'the secret is shown once only');
      const theirs = await admin('GET', `/admin/v1/webhooks?organization_id=${organization.body.id}`);
      assert.deepEqual(
        theirs.body.data.map((endpoint: { id: string }) => endpoint.id),
        [filtered.body.id],
      );
      const all = await admin('GET', '/admin/v1/webhooks');
      assert.deepEqual(
        all.body.data.map((endpoint: { id: string }) => endpoint.id),
        [created.body.id, filtered.body.id],
      );
      assert.ok(all.body.data.every((endpoint: object) => !('secret' in endpoint)));

      const removed = await admin('DELETE', `/admin/v1/webhooks/${created.body.id}`);
      assert.equal(removed.status, 200);
      assert.deepEqual(removed.body, { ...listed, deleted: true });
      assert.deepEqual((await admin('GET', `/admin/v1/webhooks?account_id=${gateway.account.id}`)).body.data, []);
      assertError(await admin('DELETE', `/admin/v1/webhooks/${created.body.id}`), { status: 404, type: 'invalid_request_error', code: 'not_found' });
    });

    test('an unknown event type, an empty list, no owner, two owners or an unknown owner is refused', async () => {
      const account_id = gateway.account.id;
      const unknown = await admin('POST', '/admin/v1/webhooks', { account_id, url: PUBLIC_URL, event_types: ['response.completed', 'response.done'] });
      assertError(unknown, { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'event_types[1]' });
      assert.match(unknown.body.error.message, /Unknown event type 'response\.done'\. Event types: response\.completed, response\.incomplete, /);
      const empty = await admin('POST', '/admin/v1/webhooks', { account_id, url: PUBLIC_URL, event_types: [] });
      assertError(empty, { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'event_types' });
      assertError(await admin('POST', '/admin/v1/webhooks', { url: PUBLIC_URL }), {
        status: 400,
        type: 'invalid_request_error',
        code: 'missing_required_parameter',
        param: 'account_id',
      });
      assertError(await admin('POST', '/admin/v1/webhooks', { account_id, organization_id: 'org_x', url: PUBLIC_URL }), {
        status: 400,
        type: 'invalid_request_error',
        code: 'invalid_value',
      });
      assertError(await admin('POST', '/admin/v1/webhooks', { account_id: 'acct_nope', url: PUBLIC_URL }), {
        status: 404,
        type: 'invalid_request_error',
        code: 'not_found',
      });
      assertError(await admin('GET', '/admin/v1/webhooks?account_id=acct_nope'), { status: 404, type: 'invalid_request_error', code: 'not_found' });
      assertError(await admin('POST', '/admin/v1/webhooks', { account_id }), {
        status: 400,
        type: 'invalid_request_error',
        code: 'missing_required_parameter',
        param: 'url',
      });
      assertError(await admin('POST', '/admin/v1/webhooks', { account_id, url: PUBLIC_URL, secret: 'mine' }), {
        status: 400,
        type: 'invalid_request_error',
        code: 'invalid_value',
      });
    });

    test('a URL on a loopback, private or other non-public address is refused, as is another scheme', async () => {
      for (const url of [
        'http://127.0.0.1:9000/hook',
        'http://localhost/hook',
        'http://10.1.2.3/',
        'http://[::1]/',
        'http://[::ffff:192.168.0.1]/',
        'http://[fd00::1]/',
        'http://100.64.0.1/',
        'http://169.254.169.254/latest/meta-data/',
        'http://0.0.0.0/',
      ]) {
        const refused = await admin('POST', '/admin/v1/webhooks', { account_id: gateway.account.id, url });
        assertError(refused, { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'url' });
        assert.match(refused.body.error.message, /which is not a public address: .* webhooks\.allow_private_addresses/, url);
      }
      for (const url of ['ftp://93.184.216.34/', 'https://user:pass@93.184.216.34/', 'not a url']) {
        assertError(await admin('POST', '/admin/v1/webhooks', { account_id: gateway.account.id, url }), {
          status: 400,
          type: 'invalid_request_error',
          code: 'invalid_value',
          param: 'url',
        });
      }
      assert.deepEqual((await admin('GET', `/admin/v1/webhooks?account_id=${gateway.account.id}`)).body.data, []);
    });

    test('a customer key opens none of it', async () => {
      assertError(await call(gateway.app, 'GET', '/admin/v1/webhooks', { key: gateway.apiKey }), {
        status: 401,
        type: 'authentication_error',
        code: 'invalid_api_key',
      });
    });
  });
}

describe('admin API: webhooks with webhooks.allow_private_addresses', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({ adminKey: ADMIN_KEY, config: { ...loadConfigFile(DEMO_CONFIG_PATH), webhooks: { allow_private_addresses: true } } });
  });
  after(() => gateway.close());

  test('loopback and private URLs are accepted', async () => {
    for (const url of ['http://127.0.0.1:9000/hook', 'http://localhost/hook', 'http://10.1.2.3/']) {
      const created = await call(gateway.app, 'POST', '/admin/v1/webhooks', { key: ADMIN_KEY, json: { account_id: gateway.account.id, url } });
      assert.equal(created.status, 200, created.text);
    }
  });
});
