import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { ROUTES_WITH_PROBES } from './probe-routes.ts';

const ADMIN_KEY = 'admin-secret-for-tests';

describe('admin API switched off', () => {
  test('without GATEWAY_ADMIN_KEY every admin path is 404, even with a key', async () => {
    const gateway = await startGateway();
    try {
      for (const [method, path] of [
        ['GET', '/admin/v1/accounts'],
        ['POST', '/admin/v1/keys'],
        ['GET', `/admin/v1/accounts/${gateway.account.id}`],
      ] as const) {
        assertError(await call(gateway.app, method, path, { key: gateway.apiKey }), {
          status: 404,
          type: 'invalid_request_error',
          code: 'not_found',
        });
      }
    } finally {
      await gateway.close();
    }
  });
});

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`admin API (${engine})`, () => {
    let gateway: TestGateway;
    const admin = (method: string, path: string, json?: unknown) => call(gateway.app, method, path, { key: ADMIN_KEY, json });

    before(async () => {
      gateway = await startGateway({ engine, adminKey: ADMIN_KEY, routes: ROUTES_WITH_PROBES });
    });
    after(() => gateway.close());

    test('customer keys never open the admin API and the admin key never opens /v1', async () => {
      assertError(await call(gateway.app, 'GET', '/admin/v1/accounts', { key: gateway.apiKey }), {
        status: 401,
        type: 'authentication_error',
        code: 'invalid_api_key',
      });
      assertError(await call(gateway.app, 'GET', '/admin/v1/accounts', { headers: { 'x-api-key': ADMIN_KEY } }), {
        status: 401,
        type: 'authentication_error',
        code: 'missing_api_key',
      });
      assertError(await call(gateway.app, 'GET', '/admin/v1/accounts', { key: `${ADMIN_KEY}x` }), {
        status: 401,
        type: 'authentication_error',
      });
      assertError(await call(gateway.app, 'GET', '/v1/probe/chat', { key: ADMIN_KEY }), {
        status: 401,
        type: 'authentication_error',
        code: 'invalid_api_key',
      });
    });

    test('organization → account → credit → key → balance, end to end', async () => {
      const organization = await admin('POST', '/admin/v1/organizations', { name: 'Acme', community_supply: true });
      assert.equal(organization.status, 200);
      assert.match(organization.body.id, /\S/);
      assert.equal(organization.body.object, 'organization');
      assert.equal(organization.body.community_supply, true);
      assert.equal(organization.body.training_use, false);
      assert.equal(organization.body.balance_usd, '0');

      const account = await admin('POST', '/admin/v1/accounts', { name: 'Dev', organization_id: organization.body.id, rate: '1.15' });
      assert.equal(account.status, 200);
      assert.equal(account.body.organization_id, organization.body.id);
      assert.equal(account.body.rate, '1.15');

      const credit = await admin('POST', `/admin/v1/accounts/${account.body.id}/credit`, { amount_usd: '12.345678' });
      assert.equal(credit.status, 200);
      assert.equal(credit.body.amount_usd, '12.345678');
      assert.equal(credit.body.balance_usd, '12.345678');
      await admin('POST', `/admin/v1/accounts/${account.body.id}/credit`, { amount_usd: '0.000001' });
      const shown = await admin('GET', `/admin/v1/accounts/${account.body.id}`);
      assert.equal(shown.body.balance_usd, '12.345679');

      const orgCredit = await admin('POST', `/admin/v1/organizations/${organization.body.id}/credit`, { amount_usd: '5' });
      assert.equal(orgCredit.body.organization_id, organization.body.id);
      assert.equal((await admin('GET', `/admin/v1/organizations/${organization.body.id}`)).body.balance_usd, '5');

      const key = await admin('POST', '/admin/v1/keys', { account_id: account.body.id, name: 'ci', scopes: ['chat'] });
      assert.equal(key.status, 200);
      assert.match(key.body.key, /^gateway_[A-Za-z0-9_-]{43}$/);
      assert.equal(key.body.display_prefix, key.body.key.slice(0, 12));
      assert.deepEqual(key.body.scopes, ['chat']);
      assert.equal(key.body.allowed_models, null);
      const probe = await call(gateway.app, 'GET', '/v1/probe/chat', { key: key.body.key });
      assert.equal(probe.status, 200);
      assert.deepEqual(probe.body.owner, { kind: 'account', id: account.body.id });
      assert.equal(probe.body.rate, '1150000/1000000');

      const listed = await admin('GET', `/admin/v1/keys?account_id=${account.body.id}`);
      assert.equal(listed.status, 200);
      assert.equal(listed.body.data.length, 1);
      assert.equal(listed.body.data[0].id, key.body.id);
      assert.equal(listed.body.data[0].key, undefined, 'the plaintext is shown once only');

      const orgKey = await admin('POST', '/admin/v1/keys', { organization_id: organization.body.id });
      const orgProbe = await call(gateway.app, 'GET', '/v1/probe/chat', { key: orgKey.body.key });
      assert.deepEqual(orgProbe.body.owner, { kind: 'organization', id: organization.body.id });
      assert.deepEqual(orgProbe.body.consent, { communitySupply: true, trainingUse: false });
    });

    test('a consent or rate change applies to the next request of an existing key', async () => {
      const account = await admin('POST', '/admin/v1/accounts', { name: 'Consent' });
      const key = await admin('POST', '/admin/v1/keys', { account_id: account.body.id });
      const before = await call(gateway.app, 'GET', '/v1/probe/chat', { key: key.body.key });
      assert.deepEqual(before.body.consent, { communitySupply: false, trainingUse: false });

      const patched = await admin('PATCH', `/admin/v1/accounts/${account.body.id}`, { training_use: true, rate: 2 });
      assert.equal(patched.status, 200);
      assert.equal(patched.body.training_use, true);
      assert.equal(patched.body.community_supply, false);
      assert.equal(patched.body.rate, '2');
      assert.equal(patched.body.balance_usd, '0');
      const afterPatch = await call(gateway.app, 'GET', '/v1/probe/chat', { key: key.body.key });
      assert.deepEqual(afterPatch.body.consent, { communitySupply: false, trainingUse: true });
      assert.equal(afterPatch.body.rate, '2000000/1000000');

      const reset = await admin('PATCH', `/admin/v1/accounts/${account.body.id}`, { rate: null });
      assert.equal(reset.body.rate, null);
      assert.equal((await call(gateway.app, 'GET', '/v1/probe/chat', { key: key.body.key })).body.rate, '1/1');
    });

    test('an organization’s consent or rate change applies to the next request of its existing key', async () => {
      const organization = await admin('POST', '/admin/v1/organizations', { name: 'Org consent' });
      const key = await admin('POST', '/admin/v1/keys', { organization_id: organization.body.id });
      const before = await call(gateway.app, 'GET', '/v1/probe/chat', { key: key.body.key });
      assert.deepEqual(before.body.consent, { communitySupply: false, trainingUse: false });
      assert.equal(before.body.rate, '1/1');

      const patched = await admin('PATCH', `/admin/v1/organizations/${organization.body.id}`, { community_supply: true, rate: '1.5' });
      assert.equal(patched.status, 200);
      assert.equal(patched.body.object, 'organization');
      assert.equal(patched.body.id, organization.body.id);
      assert.equal(patched.body.name, 'Org consent');
      assert.equal(patched.body.community_supply, true);
      assert.equal(patched.body.training_use, false);
      assert.equal(patched.body.rate, '1.5');
      assert.equal(patched.body.balance_usd, '0');
      const afterPatch = await call(gateway.app, 'GET', '/v1/probe/chat', { key: key.body.key });
      assert.deepEqual(afterPatch.body.owner, { kind: 'organization', id: organization.body.id });
      assert.deepEqual(afterPatch.body.consent, { communitySupply: true, trainingUse: false });
      assert.equal(afterPatch.body.rate, '1500000/1000000');

      const reset = await admin('PATCH', `/admin/v1/organizations/${organization.body.id}`, { rate: null });
      assert.equal(reset.body.rate, null);
      assert.equal(reset.body.community_supply, true, 'fields left out are kept');
      assert.equal((await call(gateway.app, 'GET', '/v1/probe/chat', { key: key.body.key })).body.rate, '1/1');

      assertError(await admin('PATCH', '/admin/v1/organizations/org_missing', { training_use: true }), {
        status: 404,
        type: 'invalid_request_error',
        code: 'not_found',
      });
      const path = `/admin/v1/organizations/${organization.body.id}`;
      for (const [body, param] of [
        [{ training_use: 'yes' }, 'training_use'],
        [{ rate: '-1' }, 'rate'],
        [{ surprise: 1 }, 'surprise'],
      ] as const) {
        assertError(await admin('PATCH', path, body), { status: 400, type: 'invalid_request_error', param });
      }
      const unchanged = (await admin('GET', path)).body;
      assert.equal(unchanged.training_use, false, 'a refused PATCH changes nothing');
      assert.equal(unchanged.rate, null);
    });

    test('allowed models are stored as canonical ids; aliases resolve; unknown names are 400', async () => {
      const model = gateway.deps.catalog.listModels({ communitySupply: true, trainingUse: true }, null)[0];
      assert.ok(model, 'the demo catalog has models');
      const key = await admin('POST', '/admin/v1/keys', { account_id: gateway.account.id, allowed_models: [model.id] });
      assert.equal(key.status, 200);
      assert.deepEqual(key.body.allowed_models, [model.id]);
      const alias = (model.aliases as string[] | undefined)?.find((name) => name !== model.id);
      if (alias !== undefined) {
        const byAlias = await admin('POST', '/admin/v1/keys', { account_id: gateway.account.id, allowed_models: [alias] });
        assert.deepEqual(byAlias.body.allowed_models, [model.id]);
      }
      assertError(await admin('POST', '/admin/v1/keys', { account_id: gateway.account.id, allowed_models: ['gateway/no-such-model'] }), {
        status: 400,
        type: 'invalid_request_error',
        param: 'allowed_models[0]',
      });
    });

    test('usage summary by owner', async () => {
      const usage = await admin('GET', `/admin/v1/usage?account_id=${gateway.account.id}&since=2020-01-01`);
      assert.equal(usage.status, 200);
      assert.equal(usage.body.object, 'usage');
      assert.equal(usage.body.account_id, gateway.account.id);
      assert.ok(Array.isArray(usage.body.data));
      assert.equal(typeof usage.body.total.cost_usd, 'string');
      assertError(await admin('GET', '/admin/v1/usage'), { status: 400, type: 'invalid_request_error', code: 'missing_required_parameter' });
      assertError(await admin('GET', `/admin/v1/usage?account_id=${gateway.account.id}&since=yesterday`), {
        status: 400,
        type: 'invalid_request_error',
        param: 'since',
      });
    });

    test('bad input is a 400 naming the field; unknown ids are 404', async () => {
      const cases: [string, string, unknown, string | null][] = [
        ['POST', '/admin/v1/accounts', {}, 'name'],
        ['POST', '/admin/v1/accounts', { name: 'x', community_supply: 'yes' }, 'community_supply'],
        ['POST', '/admin/v1/accounts', { name: 'x', rate: '-1' }, 'rate'],
        ['POST', '/admin/v1/accounts', { name: 'x', rate: '1.1234567' }, 'rate'],
        ['POST', '/admin/v1/accounts', { name: 'x', surprise: 1 }, 'surprise'],
        ['POST', `/admin/v1/accounts/${gateway.account.id}/credit`, { amount_usd: 10 }, 'amount_usd'],
        ['POST', `/admin/v1/accounts/${gateway.account.id}/credit`, { amount_usd: '0' }, 'amount_usd'],
        ['POST', `/admin/v1/accounts/${gateway.account.id}/credit`, { amount_usd: '1.0000000000001' }, 'amount_usd'],
        ['POST', `/admin/v1/accounts/${gateway.account.id}/credit`, { amount_usd: '99999999999' }, 'amount_usd'],
        ['POST', '/admin/v1/keys', { name: 'no owner' }, 'account_id'],
        ['POST', '/admin/v1/keys', { account_id: gateway.account.id, organization_id: 'x' }, 'organization_id'],
        ['POST', '/admin/v1/keys', { account_id: gateway.account.id, scopes: ['everything'] }, 'scopes[0]'],
      ];
      for (const [method, path, body, param] of cases) {
        assertError(await admin(method, path, body), { status: 400, type: 'invalid_request_error', param });
      }
      for (const path of ['/admin/v1/accounts/acct_missing', '/admin/v1/organizations/org_missing', '/admin/v1/keys/key_missing']) {
        assertError(await admin('GET', path), { status: 404, type: 'invalid_request_error', code: 'not_found' });
      }
      assertError(await admin('POST', '/admin/v1/accounts/acct_missing/credit', { amount_usd: '1' }), { status: 404, type: 'invalid_request_error' });
      assertError(await admin('POST', '/admin/v1/keys', { account_id: 'acct_missing' }), { status: 404, type: 'invalid_request_error' });
      assertError(await admin('DELETE', '/admin/v1/keys/key_missing'), { status: 404, type: 'invalid_request_error' });
      assertError(await admin('POST', '/admin/v1/accounts', { name: 'x', organization_id: 'org_missing' }), {
        status: 404,
        type: 'invalid_request_error',
      });
    });

    test('revoking twice keeps the first revocation', async () => {
      const key = await admin('POST', '/admin/v1/keys', { account_id: gateway.account.id });
      const first = await admin('DELETE', `/admin/v1/keys/${key.body.id}`);
      const second = await admin('DELETE', `/admin/v1/keys/${key.body.id}`);
      assert.equal(second.status, 200);
      assert.equal(second.body.revoked_at, first.body.revoked_at);
    });
  });
}

describe('configured default rate', () => {
  test('owners without a rate get billing.default_rate', async () => {
    const { loadConfigFile, DEMO_CONFIG_PATH } = await import('../../src/config/load.ts');
    const config = loadConfigFile(DEMO_CONFIG_PATH);
    const gateway = await startGateway({ config: { ...config, billing: { ...config.billing, default_rate: 1.25 } }, routes: ROUTES_WITH_PROBES });
    try {
      const probe = await call(gateway.app, 'GET', '/v1/probe/chat', { key: gateway.apiKey });
      assert.equal(probe.body.rate, '1250000/1000000');
    } finally {
      await gateway.close();
    }
  });
});
