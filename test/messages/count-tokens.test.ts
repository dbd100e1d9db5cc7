/**
 * POST /v1/messages/count_tokens: local and free. The count is the local tokenizer's estimate of
 * the decoded request (system, every block kind, tool definitions; images at a fixed estimate),
 * at least 1; the body is validated as for /v1/messages except that max_tokens is optional; a body
 * over the JSON limit is a 413; nothing is reserved, charged or logged, and no upstream is called.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeMessagesRequest } from '../../src/dialects/messages/decode.ts';
import type { CountTokensBody } from '../../src/dialects/messages/schema.ts';
import { estimatePromptTokens } from '../../src/tokens/estimate.ts';
import { imageTokenBound, UNKNOWN_IMAGE_SIDE } from '../../src/tokens/image-tokens.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { flushRequestLog, ledger } from '../chat/helpers.ts';

const MODEL = 'gateway/atlas-4-5';

describe('POST /v1/messages/count_tokens', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway();
  });
  after(() => gateway.close());

  const count = (body: unknown, key = gateway.apiKey) =>
    call(gateway.baseUrl, 'POST', '/v1/messages/count_tokens', { headers: { 'x-api-key': key }, json: body });

  const expected = (body: CountTokensBody) => estimatePromptTokens(decodeMessagesRequest(body).request);

  test('every block kind, the system prompt and the tool definitions count, as the local tokenizer says', async () => {
    const body: CountTokensBody = {
      model: MODEL,
      system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
      tools: [{ name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture, and the weather in Paris?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'A short note.' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I should call the tool.', signature: 'sig' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18 degrees and sunny' }] },
      ],
    };
    const response = await count(body);
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body, { input_tokens: expected(body) });
    // The image (bytes that are no image, so of unknown size) counts at the bound of any provider; text is tokenized.
    const withoutImage = structuredClone(body);
    (withoutImage.messages[0].content as unknown[]).splice(1, 1);
    const unknownSize = { width: UNKNOWN_IMAGE_SIDE, height: UNKNOWN_IMAGE_SIDE };
    assert.equal(response.body.input_tokens - (await count(withoutImage)).body.input_tokens, imageTokenBound(undefined, unknownSize));
  });

  test('max_tokens is optional; the smallest body counts at least 1', async () => {
    const smallest = await count({ model: MODEL, messages: [{ role: 'user', content: '' }] });
    assert.equal(smallest.status, 200, smallest.text);
    assert.ok(Number.isInteger(smallest.body.input_tokens) && smallest.body.input_tokens >= 1);
    const withMax = await count({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(withMax.status, 200);
  });

  test('validated as /v1/messages: the same 400s in the messages error shape', async () => {
    const bad = [
      [{ model: MODEL, messages: [{ role: 'user', content: [{ type: 'audio' }] }] }, 'messages[0].content[0].type'],
      [{ model: MODEL, messages: [{ role: 'user', content: 'x' }], max_tokens: '5' }, 'max_tokens'],
      [{ model: MODEL, messages: [{ role: 'user', content: 'x' }], extra: true }, 'extra'],
      [{ model: MODEL, messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools[0]'],
      [
        { model: MODEL, messages: [{ role: 'user', content: 'x' }], max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 2000 } },
        'thinking.budget_tokens',
      ],
      [{ messages: [{ role: 'user', content: 'x' }] }, 'model'],
    ] as const;
    for (const [body, param] of bad) {
      const response = await count(body);
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.type, 'error');
      assert.equal(response.body.error.type, 'invalid_request_error');
      assert.equal(response.body.error.param, param);
    }
  });

  test('a body over the 5 MiB JSON limit is a 413 in the envelope', async () => {
    const response = await count({ model: MODEL, messages: [{ role: 'user', content: 'x'.repeat(5 * 1024 * 1024) }] });
    assert.equal(response.status, 413);
    assert.equal(response.body.type, 'error');
    assert.equal(response.body.error.code, 'request_too_large');
  });

  test('authentication as for messages: no key is a 401, a key without the chat scope a 403', async () => {
    const body = { model: MODEL, messages: [{ role: 'user', content: 'x' }] };
    const missing = await call(gateway.baseUrl, 'POST', '/v1/messages/count_tokens', { json: body });
    assert.equal(missing.status, 401);
    assert.equal(missing.body.error.type, 'authentication_error');
    const scoped = await count(body, await gateway.createKey({ scopes: ['models:read'] }));
    assert.equal(scoped.status, 403);
    assert.equal(scoped.body.error.type, 'permission_error');
  });

  test('a model the key may not use is a 404, as on every route: unknown, outside its allowed models, or without consent', async () => {
    const body = (model: string, models?: string[]) => ({ model, messages: [{ role: 'user', content: 'x' }], ...(models ? { models } : {}) });
    const restricted = await gateway.createKey({ allowedModels: [MODEL] });
    for (const [model, key] of [
      ['gateway/no-such-model', gateway.apiKey],
      ['gateway/meridian-2', restricted],
      // Community-only, and the test account has not enabled community supply.
      ['gateway/ember-3-1-8b', gateway.apiKey],
      // An image model is not a model of this endpoint.
      ['gateway/prism-image-2', gateway.apiKey],
    ] as const) {
      const response = await count(body(model), key);
      assert.equal(response.status, 404, `${model}: ${response.text}`);
      assert.equal(response.body.type, 'error');
      assert.equal(response.body.error.code, 'model_not_found');
      assert.match(response.body.error.message, /does not exist or you do not have access to it/);
    }
    assert.equal((await count(body(MODEL), restricted)).status, 200);
    // A usable fallback is enough, as for /v1/messages.
    assert.equal((await count(body('gateway/meridian-2', [MODEL]), restricted)).status, 200);
  });

  test('/openapi.json describes both endpoints from the schemas that validate them', async () => {
    const response = await call(gateway.baseUrl, 'GET', '/openapi.json');
    const messages = response.body.paths['/v1/messages'].post;
    const counting = response.body.paths['/v1/messages/count_tokens'].post;
    const bodyOf = (operation: any) => operation.requestBody.content['application/json'].schema;
    assert.ok(bodyOf(messages).required.includes('max_tokens'));
    assert.ok(!bodyOf(counting).required.includes('max_tokens'));
    assert.deepEqual(Object.keys(bodyOf(counting).properties).sort(), Object.keys(bodyOf(messages).properties).sort());
    assert.ok(messages.parameters.some((parameter: { name: string }) => parameter.name === 'Idempotency-Key'));
    assert.equal(counting.responses['200'].content['application/json'].schema.properties.input_tokens.minimum, 1);
  });

  test('free: no credit moves and no request is logged', async () => {
    const before = await ledger(gateway);
    const ids: string[] = [];
    for (let index = 0; index < 3; index++) {
      const response = await count({ model: MODEL, messages: [{ role: 'user', content: `q${index}` }] });
      assert.equal(response.status, 200);
      ids.push(response.headers.get('x-gateway-request-id') ?? '');
    }
    await flushRequestLog(gateway);
    assert.deepEqual(await ledger(gateway), before);
    for (const id of ids) assert.equal(await gateway.store.getRequest(id), null);
  });
});
