/**
 * The request rules of POST /v1/embeddings (docs/embeddings.md, "Rules"), each a 400 with the
 * error envelope naming the client's field, before any credit moves; the scope, the model's
 * category and the catalog row; on the built-in simulated provider.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { simulatedConfig, ledger, newCharges, model, endpoint } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { usdToPicos } from '../../src/core/money.ts';
import { embed, embeddingEndpoint, embeddingModel } from './helpers.ts';

describe('embeddings: the rules of a request', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({
      config: simulatedConfig([
        embeddingModel('gateway/embed', [embeddingEndpoint('sim', 'sim-embed', { limits: { max_input_tokens: 50, max_batch_inputs: 3 } })]),
        // No shortening range: `dimensions` is refused.
        embeddingModel('gateway/embed-fixed', [embeddingEndpoint('sim', 'sim-embed-fixed', { capabilities: {} })]),
        model('gateway/text', [endpoint('sim-text')]),
        // Served only by community supply: an owner who has not consented does not see it.
        embeddingModel('gateway/embed-community', [embeddingEndpoint('sim', 'sim-embed-community', { supply: 'community' })]),
      ]),
    });
  });
  after(() => gateway.close());

  const refused = async (body: unknown, expected: { status?: number; code: string; param: string | null; type?: string }) => {
    const before = await ledger(gateway);
    const response = await embed(gateway, body);
    assertError(response, { status: expected.status ?? 400, type: expected.type ?? 'invalid_request_error', code: expected.code, param: expected.param });
    assert.deepEqual(await newCharges(gateway, before), []);
    assert.equal((await ledger(gateway)).balance.reserved, 0n);
    return response;
  };

  test('input: an empty string, an empty array, an empty item, mixed forms and a wrong type are refused', async () => {
    await refused({ model: 'gateway/embed', input: '' }, { code: 'invalid_value', param: 'input' });
    await refused({ model: 'gateway/embed', input: [] }, { code: 'invalid_value', param: 'input' });
    await refused({ model: 'gateway/embed', input: ['a', ''] }, { code: 'invalid_value', param: 'input[1]' });
    await refused({ model: 'gateway/embed', input: [[1, 2], []] }, { code: 'invalid_value', param: 'input[1]' });
    await refused({ model: 'gateway/embed', input: ['a', 1] }, { code: 'invalid_value', param: 'input' });
    await refused({ model: 'gateway/embed', input: [1, [2]] }, { code: 'invalid_value', param: 'input' });
    await refused({ model: 'gateway/embed', input: [[1], 'a'] }, { code: 'invalid_value', param: 'input' });
    const wrongType = await embed(gateway, { model: 'gateway/embed', input: { text: 'a' } });
    assert.equal(wrongType.status, 400);
    const negative = await embed(gateway, { model: 'gateway/embed', input: [-1] });
    assert.equal(negative.status, 400);
    const fractional = await embed(gateway, { model: 'gateway/embed', input: [[1.5]] });
    assert.equal(fractional.status, 400);
    await refused({ model: 'gateway/embed' }, { code: 'missing_required_parameter', param: 'input' });
  });

  test('input: more than 2,048 inputs is refused whatever the route; more than the route takes is refused by it', async () => {
    await refused({ model: 'gateway/embed', input: Array.from({ length: 2049 }, (_, index) => `text ${index}`) }, { code: 'invalid_value', param: 'input' });
    const response = await refused({ model: 'gateway/embed', input: ['a', 'b', 'c', 'd'] }, { code: 'invalid_value', param: 'input' });
    assert.match(response.body.error.message, /at most 3/);
    // One array of token ids is one input, however long.
    const tokens = await embed(gateway, { model: 'gateway/embed', input: Array.from({ length: 40 }, (_, index) => index) });
    assert.equal(tokens.status, 200, tokens.text);
    assert.equal(tokens.body.data.length, 1);
  });

  test("input: more tokens than the route's limits.max_input_tokens is refused", async () => {
    const response = await refused({ model: 'gateway/embed', input: ['word '.repeat(30), 'word '.repeat(30)] }, { code: 'invalid_value', param: 'input' });
    assert.match(response.body.error.message, /at most 50/);
    await refused({ model: 'gateway/embed', input: [Array.from({ length: 51 }, () => 7)] }, { code: 'invalid_value', param: 'input' });
  });

  test('encoding_format: float or base64 only', async () => {
    await refused({ model: 'gateway/embed', input: 'a', encoding_format: 'int8' }, { code: 'invalid_value', param: 'encoding_format' });
  });

  test('dimensions: refused where the route cannot shorten, out of its range, or not a positive integer', async () => {
    await refused({ model: 'gateway/embed-fixed', input: 'a', dimensions: 16 }, { code: 'unsupported_parameter', param: 'dimensions' });
    await refused({ model: 'gateway/embed', input: 'a', dimensions: 65 }, { code: 'invalid_value', param: 'dimensions' });
    await refused({ model: 'gateway/embed', input: 'a', dimensions: 4 }, { code: 'invalid_value', param: 'dimensions' });
    assert.equal((await embed(gateway, { model: 'gateway/embed', input: 'a', dimensions: 0 })).status, 400);
    assert.equal((await embed(gateway, { model: 'gateway/embed', input: 'a', dimensions: 8.5 })).status, 400);
    const shortened = await embed(gateway, { model: 'gateway/embed', input: 'a', dimensions: 8 });
    assert.equal(shortened.status, 200, shortened.text);
    assert.equal(shortened.body.data[0].embedding.length, 8);
  });

  test('unknown fields and a bad models list are refused; the gateway fields of the text endpoints are taken', async () => {
    await refused({ model: 'gateway/embed', input: 'a', temperature: 1 }, { code: 'invalid_value', param: 'temperature' });
    await refused({ model: 'gateway/embed', input: 'a', models: ['a', 'b', 'c', 'd', 'e', 'f'] }, { code: 'invalid_value', param: 'models' });
    await refused({ model: 'gateway/embed', input: 'a', gateway: { cache: 'always' } }, { code: 'invalid_value', param: 'gateway.cache' });
    // Caching options have nothing to cache in an embeddings request: accepted, and they change nothing.
    assert.equal((await embed(gateway, { model: 'gateway/embed', input: 'a', gateway: { cache: 'on', cache_ttl: '1h' } })).status, 200);
    const routed = await embed(gateway, {
      model: 'gateway/missing',
      models: ['gateway/embed'],
      input: 'a',
      user: 'end-user-1',
      provider: { sort: 'price' },
      gateway: { provider: { allow_fallbacks: false } },
    });
    assert.equal(routed.status, 200, routed.text);
    assert.equal(routed.body.model, 'gateway/embed');
  });

  test('a model of another category, or unknown, is 404 model_not_found', async () => {
    await refused({ model: 'gateway/text', input: 'a' }, { status: 404, code: 'model_not_found', param: 'model' });
    await refused({ model: 'gateway/nothing', input: 'a' }, { status: 404, code: 'model_not_found', param: 'model' });
  });

  test('consent filters embedding routes as every route: a community-only model is not found without consent', async () => {
    await refused({ model: 'gateway/embed-community', input: 'a' }, { status: 404, code: 'model_not_found', param: 'model' });
    const account = await gateway.store.createAccount({ name: 'community', consent: { communitySupply: true, trainingUse: false } });
    const key = await gateway.createKey({ owner: { kind: 'account', id: account.id } });
    await gateway.store.addCredit({ kind: 'account', id: account.id }, usdToPicos('1'));
    const served = await embed(gateway, { model: 'gateway/embed-community', input: 'a' }, {}, key);
    assert.equal(served.status, 200, served.text);
  });

  test('the scope `embeddings` opens the endpoint; a key without it is refused with 403', async () => {
    const chatOnly = await gateway.createKey({ scopes: ['chat'] });
    assertError(await embed(gateway, { model: 'gateway/embed', input: 'a' }, {}, chatOnly), {
      status: 403,
      type: 'permission_error',
      code: 'insufficient_scope',
    });
    const scoped = await gateway.createKey({ scopes: ['embeddings'] });
    assert.equal((await embed(gateway, { model: 'gateway/embed', input: 'a' }, {}, scoped)).status, 200);
  });

  test('/openapi.json describes the route with the schema that validates it, under the embeddings scope tag', async () => {
    const document = (await call(gateway.baseUrl, 'GET', '/openapi.json')).body;
    const operation = document.paths['/v1/embeddings'].post;
    assert.deepEqual(operation.tags, ['embeddings']);
    const schema = operation.requestBody.content['application/json'].schema;
    assert.deepEqual(schema.required, ['model', 'input']);
    assert.deepEqual(schema.properties.encoding_format.enum, ['float', 'base64']);
    assert.equal(schema.properties.dimensions.type, 'integer');
    assert.equal(schema.additionalProperties, false);
    assert.ok(operation.parameters.some((parameter: { name: string }) => parameter.name.toLowerCase() === 'idempotency-key'));
  });

  test('the catalog row: category, endpoint, limits, shortening range and input price', async () => {
    const row = (await call(gateway.baseUrl, 'GET', '/v1/models/gateway/embed', { key: gateway.apiKey })).body;
    assert.equal(row.category, 'EMBEDDING');
    assert.deepEqual(row.supported_endpoints, ['embeddings']);
    assert.deepEqual(row.capabilities, { dimensions: { minimum: 8, maximum: 64 } });
    assert.deepEqual(row.limits, { max_input_tokens: 50, max_batch_inputs: 3 });
    assert.deepEqual(row.pricing, { unit: 'per_1m_tokens', input_per_1m: 0.02 });
    assert.equal(row.available, true);
  });
});
