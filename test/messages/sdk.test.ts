/**
 * The official `@anthropic-ai/sdk`, unchanged, pointed at the gateway's root: `messages.create`,
 * `messages.countTokens`, and errors that the SDK surfaces with their status and message.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { ledger, newCharges } from '../chat/helpers.ts';

const MODEL = 'gateway/atlas-4-5';

describe('the Anthropic SDK against the gateway', () => {
  let gateway: TestGateway;
  let client: Anthropic;
  before(async () => {
    gateway = await startGateway();
    client = new Anthropic({ baseURL: gateway.baseUrl, apiKey: gateway.apiKey, maxRetries: 0 });
  });
  after(() => gateway.close());

  test('messages.create answers a Message and charges it once', async () => {
    const before = await ledger(gateway);
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 64,
      system: 'Answer briefly.',
      messages: [{ role: 'user', content: 'Hello!' }],
      metadata: { user_id: 'user-1' },
    });
    assert.equal(message.type, 'message');
    assert.equal(message.role, 'assistant');
    assert.equal(message.model, MODEL);
    assert.ok(message.content.length > 0);
    assert.ok(message.usage.output_tokens > 0);
    assert.equal((await newCharges(gateway, before)).length, 1);
  });

  test('messages.countTokens counts locally, without a charge', async () => {
    const before = await ledger(gateway);
    const counted = await client.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'How many tokens is this?' }] });
    assert.ok(Number.isInteger(counted.input_tokens) && counted.input_tokens >= 1);
    assert.deepEqual(await ledger(gateway), before);
  });

  test('errors reach the SDK with their status, type and message', async () => {
    const invalid = await client.messages
      .create({ model: MODEL, max_tokens: 2048, messages: [{ role: 'user', content: 'x' }], thinking: { type: 'enabled', budget_tokens: 4096 } })
      .then(
        () => assert.fail('expected a 400'),
        (error: unknown) => error,
      );
    assert.ok(invalid instanceof Anthropic.BadRequestError);
    assert.equal(invalid.status, 400);
    assert.equal(invalid.type, 'invalid_request_error');
    assert.match(invalid.message, /^400 .*'thinking\.budget_tokens' must be below 'max_tokens'/);
    assert.match(String(invalid.apiMessage), /^'thinking\.budget_tokens' must be below/);

    const missing = await client.messages
      .create({ model: 'gateway/nope', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    assert.ok(missing instanceof Anthropic.NotFoundError);
    assert.equal(missing.status, 404);

    const anonymous = new Anthropic({ baseURL: gateway.baseUrl, apiKey: 'gateway_wrong', maxRetries: 0 });
    const denied = await anonymous.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }).catch((error: unknown) => error);
    assert.ok(denied instanceof Anthropic.AuthenticationError);
    assert.equal(denied.status, 401);
  });
});
