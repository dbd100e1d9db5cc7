/**
 * GET /v1/models and GET /v1/models/{model} through the real app (authenticator,
 * store, serializer, and the catalog as the gateway composes it): headers, scopes, allowed models,
 * consent, aliases, availability and the 404 envelope.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { CONSENT, config, endpoint, model } from './builders.ts';

describe('model catalog over HTTP (demo catalog)', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway();
  });
  after(() => gateway?.close());

  test("GET /v1/models lists the rows of the caller's consent view, privately cacheable", async () => {
    const response = await call(gateway.app, 'GET', '/v1/models', { key: gateway.apiKey });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'private, max-age=60');
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.match(response.headers.get('x-gateway-request-id') ?? '', /^req_/);
    assert.equal(response.body.object, 'list');
    // The serializer keeps every field exactly as derived.
    const expected = JSON.parse(JSON.stringify(gateway.deps.catalog.listModels(CONSENT.none, null)));
    assert.deepEqual(response.body.data, expected);
    const ids = response.body.data.map((row: { id: string }) => row.id);
    assert.ok(ids.includes('gateway/atlas-4-5'));
    assert.ok(!ids.includes('gateway/ember-3-1-8b'), 'community-only model hidden without consent');
    assert.ok(!ids.includes('gateway/meridian-2'), 'training-only model hidden without consent');
  });

  test('the x-api-key header works as well', async () => {
    const response = await call(gateway.app, 'GET', '/v1/models', { headers: { 'x-api-key': gateway.apiKey } });
    assert.equal(response.status, 200);
  });

  test('GET /v1/models/{id} takes the id with its slashes as-is, or encoded', async () => {
    const expected = JSON.parse(JSON.stringify(gateway.deps.catalog.getModel('gateway/atlas-4-5', CONSENT.none, null)));
    for (const path of ['/v1/models/gateway/atlas-4-5', '/v1/models/gateway%2Fatlas-4-5']) {
      const response = await call(gateway.app, 'GET', path, { key: gateway.apiKey });
      assert.equal(response.status, 200, path);
      assert.deepEqual(response.body, expected);
    }
  });

  test('GET /v1/models/{alias} returns the model under its id', async () => {
    for (const alias of ['atlas-4.5', 'atlas-4-5', 'gateway/atlas-4.5', 'atlas-labs/atlas-4.5']) {
      const response = await call(gateway.app, 'GET', `/v1/models/${alias}`, { key: gateway.apiKey });
      assert.equal(response.status, 200, alias);
      assert.equal(response.body.id, 'gateway/atlas-4-5');
    }
  });

  test('an unknown model is 404 model_not_found with the envelope', async () => {
    const response = await call(gateway.app, 'GET', '/v1/models/gateway/no-such-model', { key: gateway.apiKey });
    assertError(response, { status: 404, type: 'invalid_request_error', code: 'model_not_found' });
    assert.match(response.body.error.message, /gateway\/no-such-model/);
  });

  test('a model hidden by consent is 404 model_not_found', async () => {
    const response = await call(gateway.app, 'GET', '/v1/models/gateway/ember-3-1-8b', { key: gateway.apiKey });
    assertError(response, { status: 404, type: 'invalid_request_error', code: 'model_not_found' });
  });

  test('without a valid key: 401', async () => {
    assertError(await call(gateway.app, 'GET', '/v1/models'), { status: 401, type: 'authentication_error' });
    assertError(await call(gateway.app, 'GET', '/v1/models/gateway/atlas-4-5', { key: 'gateway_not-a-real-key' }), {
      status: 401,
      type: 'authentication_error',
    });
  });

  test('a key restricted to other scopes gets 403; models:read opens both endpoints', async () => {
    const chatOnly = await gateway.createKey({ scopes: ['chat'] });
    assertError(await call(gateway.app, 'GET', '/v1/models', { key: chatOnly }), { status: 403, type: 'permission_error' });
    assertError(await call(gateway.app, 'GET', '/v1/models/gateway/atlas-4-5', { key: chatOnly }), {
      status: 403,
      type: 'permission_error',
    });
    const reader = await gateway.createKey({ scopes: ['models:read'] });
    assert.equal((await call(gateway.app, 'GET', '/v1/models', { key: reader })).status, 200);
    assert.equal((await call(gateway.app, 'GET', '/v1/models/gateway/atlas-4-5', { key: reader })).status, 200);
  });

  test('a key with allowed models sees only those; others are 404 even by alias', async () => {
    const key = await gateway.createKey({ allowedModels: ['gateway/reel-3', 'gateway/atlas-4-5-mini'] });
    const list = await call(gateway.app, 'GET', '/v1/models', { key });
    assert.deepEqual(
      list.body.data.map((row: { id: string }) => row.id),
      ['gateway/atlas-4-5-mini', 'gateway/reel-3'],
    );
    assert.equal((await call(gateway.app, 'GET', '/v1/models/reel-3', { key })).status, 200);
    assertError(await call(gateway.app, 'GET', '/v1/models/gateway/atlas-4-5', { key }), {
      status: 404,
      type: 'invalid_request_error',
      code: 'model_not_found',
    });
    assertError(await call(gateway.app, 'GET', '/v1/models/atlas-4.5', { key }), {
      status: 404,
      type: 'invalid_request_error',
      code: 'model_not_found',
    });
  });

  test('an owner with both consents sees every model, with community rates where lower', async () => {
    const account = await gateway.store.createAccount({ name: 'consenting', consent: { communitySupply: true, trainingUse: true } });
    const key = await gateway.createKey({ owner: { kind: 'account', id: account.id } });
    const list = await call(gateway.app, 'GET', '/v1/models', { key });
    assert.deepEqual(list.body.data, JSON.parse(JSON.stringify(gateway.deps.catalog.listModels(CONSENT.all, null))));
    const mini = await call(gateway.app, 'GET', '/v1/models/gateway/atlas-4-5-mini', { key });
    assert.deepEqual(mini.body.pricing.conditions, ['community_supply']);
    assert.equal(mini.body.pricing.input_per_1m, 0.5);
    assert.equal((await call(gateway.app, 'GET', '/v1/models/gateway/meridian-2', { key })).status, 200);
  });

  test("an organization key follows the organization's consent, not its member account's", async () => {
    const none = JSON.parse(JSON.stringify(gateway.deps.catalog.listModels(CONSENT.none, null)));
    const all = JSON.parse(JSON.stringify(gateway.deps.catalog.listModels(CONSENT.all, null)));
    assert.notDeepEqual(none, all, 'the two views must differ for this test to tell them apart');
    const cases = [
      { organization: CONSENT.all, member: CONSENT.none, expected: all },
      { organization: CONSENT.none, member: CONSENT.all, expected: none },
    ];
    for (const { organization, member, expected } of cases) {
      const org = await gateway.store.createOrganization({ name: 'org', consent: organization });
      await gateway.store.createAccount({ name: 'member', organizationId: org.id, consent: member });
      const key = await gateway.createKey({ owner: { kind: 'organization', id: org.id } });
      const list = await call(gateway.app, 'GET', '/v1/models', { key });
      assert.equal(list.status, 200);
      assert.deepEqual(list.body.data, expected);
    }
  });

  test('available: every model of the demo catalog, chat, image, video and embeddings, is callable', async () => {
    const account = await gateway.store.createAccount({ name: 'everything', consent: { communitySupply: true, trainingUse: true } });
    const key = await gateway.createKey({ owner: { kind: 'account', id: account.id } });
    const list = await call(gateway.app, 'GET', '/v1/models', { key });
    const rows = list.body.data as { id: string; category: string; available: boolean }[];
    assert.deepEqual(new Set(rows.map((row) => row.category)), new Set(['LLM', 'IMAGE', 'VIDEO', 'EMBEDDING']));
    for (const row of rows) assert.equal(row.available, true, row.id);
  });

  test('the OpenAPI description includes the model endpoints', async () => {
    const response = await call(gateway.app, 'GET', '/openapi.json');
    assert.equal(response.status, 200);
    const paths = Object.keys(response.body.paths);
    assert.ok(paths.includes('/v1/models'), paths.join(', '));
    assert.ok(
      paths.some((path) => path.startsWith('/v1/models/')),
      paths.join(', '),
    );
  });
});

describe('model catalog over HTTP (operator config)', () => {
  let gateway: TestGateway;
  before(async () => {
    const base = config([
      model(
        'gateway/edge-case-1',
        [
          endpoint({
            pricing: { unit: 'per_second', per_second: 0.2, variants: [{ key: 'hd', price: 0.3, meta: { nested: { fps: [24, 30] }, audio: false } }] },
            limits: { max_tokens: null, supported_qualities: [] },
            parameters: { video: { duration: { allowed_values: [4, 'auto', true], minimum: 1 } } },
          }),
        ],
        { category: 'VIDEO', type: 'video', output_modalities: ['video'], knowledge_cutoff: null },
      ),
      // A text model configured on a provider kind no chat protocol serves (never called here).
      model('gateway/llm-on-images', [endpoint({ provider: 'images', pricing: { unit: 'per_1m_tokens', input_per_1m: 1, output_per_1m: 2 } })]),
    ]);
    gateway = await startGateway({
      config: { ...base, providers: [...base.providers, { id: 'images', kind: 'openai-images', base_url: 'http://127.0.0.1:9/v1' }] },
    });
  });
  after(() => gateway?.close());

  test('free-form meta, null limits, empty lists and mixed allowed values survive serialization', async () => {
    const response = await call(gateway.app, 'GET', '/v1/models/gateway/edge-case-1', { key: gateway.apiKey });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, JSON.parse(JSON.stringify(gateway.deps.catalog.getModel('gateway/edge-case-1', CONSENT.none, null))));
    assert.deepEqual(response.body.pricing.variants, [{ key: 'hd', price: 0.3, meta: { nested: { fps: [24, 30] }, audio: false } }]);
    assert.deepEqual(response.body.limits, { max_tokens: null, supported_qualities: [] });
    assert.deepEqual(response.body.parameter_constraints[0].parameters.video.duration, { allowed_values: [4, 'auto', true], minimum: 1 });
  });

  test('a text model whose only provider has no chat protocol is listed as not available', async () => {
    const response = await call(gateway.app, 'GET', '/v1/models/gateway/llm-on-images', { key: gateway.apiKey });
    assert.equal(response.status, 200);
    assert.equal(response.body.available, false);
    assert.equal(response.body.pricing.input_per_1m, 1);
  });
});
