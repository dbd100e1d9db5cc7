import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAuthenticator } from '../../src/auth/authenticator.ts';
import { generateApiKey, hashApiKey } from '../../src/auth/keys.ts';
import { eventually } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { ROUTES_WITH_PROBES } from './probe-routes.ts';

describe('API keys', () => {
  test('generated keys are gateway_ + 43 base64url characters (32 bytes), stored as their SHA-256', () => {
    const key = generateApiKey();
    assert.match(key.plaintext, /^gateway_[A-Za-z0-9_-]{43}$/);
    assert.equal(key.hash, hashApiKey(key.plaintext));
    assert.match(key.hash, /^[0-9a-f]{64}$/);
    assert.equal(key.displayPrefix, key.plaintext.slice(0, 12));
    assert.notEqual(generateApiKey().plaintext, key.plaintext);
  });
});

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`authentication over HTTP (${engine})`, () => {
    let gateway: TestGateway;
    before(async () => {
      gateway = await startGateway({ engine, routes: ROUTES_WITH_PROBES, adminKey: 'admin-secret-for-tests' });
    });
    after(() => gateway.close());

    test('the key is accepted as Authorization: Bearer and as x-api-key', async () => {
      const bearer = await call(gateway.app, 'GET', '/v1/probe/chat', { key: gateway.apiKey });
      assert.equal(bearer.status, 200);
      assert.deepEqual(bearer.body.owner, { kind: 'account', id: gateway.account.id });
      const header = await call(gateway.app, 'GET', '/v1/probe/chat', { headers: { 'x-api-key': gateway.apiKey } });
      assert.equal(header.status, 200);
      assert.equal(header.body.key_id, bearer.body.key_id);
      const lowercaseScheme = await call(gateway.app, 'GET', '/v1/probe/chat', { headers: { authorization: `bearer ${gateway.apiKey}` } });
      assert.equal(lowercaseScheme.status, 200);
    });

    test('a missing key is 401 missing_api_key', async () => {
      assertError(await call(gateway.app, 'GET', '/v1/probe/chat'), { status: 401, type: 'authentication_error', code: 'missing_api_key' });
    });

    test('unknown, malformed and foreign keys are 401 invalid_api_key', async () => {
      const unknown = generateApiKey().plaintext;
      const attempts: Record<string, string>[] = [
        { authorization: `Bearer ${unknown}` },
        { 'x-api-key': unknown },
        { authorization: 'Bearer sk-not-ours' },
        { authorization: 'Basic dXNlcjpwYXNz' },
        { authorization: 'Bearer' },
        { authorization: `Bearer ${gateway.apiKey}x` },
        { authorization: `Bearer gateway_${'a'.repeat(300)}` },
      ];
      for (const headers of attempts) {
        assertError(await call(gateway.app, 'GET', '/v1/probe/chat', { headers }), {
          status: 401,
          type: 'authentication_error',
          code: 'invalid_api_key',
        });
      }
    });

    test('a revoked key is refused on the very next request', async () => {
      const key = await gateway.createKey({ name: 'to revoke' });
      const before = await call(gateway.app, 'GET', '/v1/probe/chat', { key });
      assert.equal(before.status, 200);
      const revoke = await call(gateway.app, 'DELETE', `/admin/v1/keys/${before.body.key_id}`, { key: 'admin-secret-for-tests' });
      assert.equal(revoke.status, 200);
      assert.equal(typeof revoke.body.revoked_at, 'number');
      const afterRevoke = await call(gateway.app, 'GET', '/v1/probe/chat', { key });
      assertError(afterRevoke, { status: 401, type: 'authentication_error', code: 'invalid_api_key' });
      assert.match(afterRevoke.body.error.message, /revoked/);
    });

    test('a key restricted to other scopes gets 403 permission_error; its own scope passes', async () => {
      const key = await gateway.createKey({ scopes: ['models:read'] });
      assertError(await call(gateway.app, 'GET', '/v1/probe/chat', { key }), {
        status: 403,
        type: 'permission_error',
        code: 'insufficient_scope',
      });
      assert.equal((await call(gateway.app, 'GET', '/v1/probe/models', { key })).status, 200);
      const unrestricted = await gateway.createKey({ scopes: null });
      assert.equal((await call(gateway.app, 'GET', '/v1/probe/models', { key: unrestricted })).status, 200);
    });

    test('an organization key resolves to the organization: its consent and its rate', async () => {
      const organization = await gateway.store.createOrganization({
        name: 'org',
        consent: { communitySupply: true, trainingUse: false },
        rate: { numerator: 3n, denominator: 2n },
      });
      const key = await gateway.createKey({ owner: { kind: 'organization', id: organization.id }, allowedModels: ['gateway/x'] });
      const response = await call(gateway.app, 'GET', '/v1/probe/chat', { key });
      assert.equal(response.status, 200);
      assert.deepEqual(response.body.owner, { kind: 'organization', id: organization.id });
      assert.deepEqual(response.body.consent, { communitySupply: true, trainingUse: false });
      assert.equal(response.body.rate, '3/2');
      assert.deepEqual(response.body.allowed_models, ['gateway/x']);
    });

    test('an owner without its own rate gets the default rate of 1', async () => {
      const response = await call(gateway.app, 'GET', '/v1/probe/chat', { key: gateway.apiKey });
      assert.equal(response.body.rate, '1/1');
    });
  });
}

describe('cross-instance invalidation', () => {
  test('a change bumped on the shared store reaches another instance through the change feed', async () => {
    const gateway = await startGateway({ routes: ROUTES_WITH_PROBES });
    // A second authenticator on the same store stands for another instance: it is never told directly.
    const other = createAuthenticator(gateway.store, { pollIntervalMs: 10 });
    try {
      const key = await gateway.createKey();
      const request = { headers: { authorization: `Bearer ${key}` } } as never;
      const context = await other.authenticate(request);
      await gateway.store.revokeKey(context.key.id, Date.now());
      // Cached: the other instance has not heard of the change yet.
      assert.equal((await other.authenticate(request)).key.id, context.key.id);
      await gateway.store.bumpVersion();
      await eventually(() =>
        assert.rejects(other.authenticate(request), (error: { status?: number }) => error.status === 401, 'the revocation reached the other instance'),
      );
    } finally {
      other.stop();
      await gateway.close();
    }
  });

  test('an unknown key is remembered only briefly: a key created afterwards works', async () => {
    const gateway = await startGateway({ routes: ROUTES_WITH_PROBES });
    let clock = 1_000;
    const authenticator = createAuthenticator(gateway.store, { pollIntervalMs: 0, negativeTtlMs: 100, now: () => clock });
    try {
      const material = generateApiKey();
      const request = { headers: { 'x-api-key': material.plaintext } } as never;
      await assert.rejects(authenticator.authenticate(request), { status: 401 });
      await gateway.store.createKey({ owner: { kind: 'account', id: gateway.account.id }, hash: material.hash, displayPrefix: material.displayPrefix });
      // Still remembered as unknown within the negative TTL…
      await assert.rejects(authenticator.authenticate(request), { status: 401 });
      clock += 101;
      // …and looked up again after it.
      assert.equal((await authenticator.authenticate(request)).owner.id, gateway.account.id);
    } finally {
      authenticator.stop();
      await gateway.close();
    }
  });
});
