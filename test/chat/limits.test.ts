/**
 * Every field rule and limit of the chat completions table: a wrong type or an out-of-range value
 * is a 400 naming the field in the client's terms, never coerced, and never charged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { ledger } from './helpers.ts';

const MODEL = 'gateway/atlas-4-5';
const user = (content: unknown = 'hi') => ({ role: 'user', content });
const base = { model: MODEL, messages: [user()] };
const fn = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: {} } } });

/** [description, body, expected param, expected code] */
const INVALID: ReadonlyArray<readonly [string, Record<string, unknown>, string | null, string]> = [
  ['model missing', { messages: [user()] }, 'model', 'missing_required_parameter'],
  ['model empty', { ...base, model: '' }, 'model', 'invalid_value'],
  ['model not a string', { ...base, model: 7 }, 'model', 'invalid_value'],
  ['messages missing', { model: MODEL }, 'messages', 'missing_required_parameter'],
  ['messages empty', { ...base, messages: [] }, 'messages', 'invalid_value'],
  ['1001 messages', { ...base, messages: Array.from({ length: 1001 }, () => user()) }, 'messages', 'invalid_value'],
  ['unknown role', { ...base, messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role', 'invalid_value'],
  ['role missing', { ...base, messages: [{ content: 'x' }] }, 'messages[0].role', 'missing_required_parameter'],
  ['content missing', { ...base, messages: [user(), { role: 'user' }] }, 'messages[1].content', 'missing_required_parameter'],
  ['content a number', { ...base, messages: [user(5)] }, 'messages[0].content', 'invalid_value'],
  [
    '1001 content parts',
    { ...base, messages: [user(Array.from({ length: 1001 }, () => ({ type: 'text', text: 'x' })))] },
    'messages[0].content',
    'invalid_value',
  ],
  ['unknown part type', { ...base, messages: [user([{ type: 'audio' }])] }, 'messages[0].content[0].type', 'invalid_value'],
  ['text part without text', { ...base, messages: [user([{ type: 'text' }])] }, 'messages[0].content[0].text', 'missing_required_parameter'],
  [
    'image url not a string',
    { ...base, messages: [user([{ type: 'image_url', image_url: { url: 3 } }])] },
    'messages[0].content[0].image_url.url',
    'invalid_value',
  ],
  [
    'image url not http or data',
    { ...base, messages: [user([{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }])] },
    'messages[0].content[0].image_url.url',
    'invalid_value',
  ],
  [
    'image part on a system message',
    { ...base, messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }, user()] },
    'messages[0].content[0].type',
    'invalid_value',
  ],
  [
    'tool message without tool_call_id',
    { ...base, messages: [user(), { role: 'tool', content: 'x' }] },
    'messages[1].tool_call_id',
    'missing_required_parameter',
  ],
  ['tool_calls on a user message', { ...base, messages: [{ role: 'user', content: 'x', tool_calls: [] }] }, 'messages[0].tool_calls', 'invalid_value'],
  [
    'assistant without content or tool calls',
    { ...base, messages: [user(), { role: 'assistant', content: null }, user()] },
    'messages[1].content',
    'invalid_value',
  ],
  [
    'tool call arguments not a string',
    { ...base, messages: [user(), { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: {} } }] }] },
    'messages[1].tool_calls[0].function.arguments',
    'invalid_value',
  ],
  ['n = 2', { ...base, n: 2 }, 'n', 'invalid_value'],
  ['n = 0', { ...base, n: 0 }, 'n', 'invalid_value'],
  ['max_tokens 0', { ...base, max_tokens: 0 }, 'max_tokens', 'invalid_value'],
  ['max_tokens 200001', { ...base, max_tokens: 200001 }, 'max_tokens', 'invalid_value'],
  ['max_tokens as a string', { ...base, max_tokens: '100' }, 'max_tokens', 'invalid_value'],
  ['max_tokens fractional', { ...base, max_tokens: 1.5 }, 'max_tokens', 'invalid_value'],
  ['max_completion_tokens 200001', { ...base, max_completion_tokens: 200001 }, 'max_completion_tokens', 'invalid_value'],
  ['stream as a string', { ...base, stream: 'true' }, 'stream', 'invalid_value'],
  ['stream_options without stream', { ...base, stream_options: { include_usage: true } }, 'stream_options', 'invalid_value'],
  [
    'stream_options.include_usage not boolean',
    { ...base, stream: true, stream_options: { include_usage: 1 } },
    'stream_options.include_usage',
    'invalid_value',
  ],
  ['five stop sequences', { ...base, stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop', 'invalid_value'],
  ['stop of the wrong type', { ...base, stop: 4 }, 'stop', 'invalid_value'],
  ['a stop sequence of the wrong type', { ...base, stop: ['a', 4] }, 'stop[1]', 'invalid_value'],
  ['presence_penalty -2.1', { ...base, presence_penalty: -2.1 }, 'presence_penalty', 'invalid_value'],
  ['frequency_penalty 2.1', { ...base, frequency_penalty: 2.1 }, 'frequency_penalty', 'invalid_value'],
  ['seed fractional', { ...base, seed: 1.5 }, 'seed', 'invalid_value'],
  ['parallel_tool_calls not boolean', { ...base, parallel_tool_calls: 'false' }, 'parallel_tool_calls', 'invalid_value'],
  ['logprobs not boolean', { ...base, logprobs: 1 }, 'logprobs', 'invalid_value'],
  ['top_logprobs 21', { ...base, logprobs: true, top_logprobs: 21 }, 'top_logprobs', 'invalid_value'],
  ['top_logprobs without logprobs', { ...base, top_logprobs: 2 }, 'top_logprobs', 'invalid_value'],
  ['temperature 2.1', { ...base, temperature: 2.1 }, 'temperature', 'invalid_value'],
  ['temperature negative', { ...base, temperature: -0.1 }, 'temperature', 'invalid_value'],
  ['top_p 1.1', { ...base, top_p: 1.1 }, 'top_p', 'invalid_value'],
  ['513 tools', { ...base, tools: Array.from({ length: 513 }, (_, index) => fn(`f${index}`)) }, 'tools', 'invalid_value'],
  ['two web_search tools', { ...base, tools: [{ type: 'web_search' }, fn('f'), { type: 'web_search' }] }, 'tools[2]', 'invalid_value'],
  ['unknown tool type', { ...base, tools: [{ type: 'code_interpreter' }] }, 'tools[0].type', 'invalid_value'],
  ['bad function name', { ...base, tools: [fn('has space')] }, 'tools[0].function.name', 'invalid_value'],
  ['tool_choice unknown string', { ...base, tools: [fn('f')], tool_choice: 'any' }, 'tool_choice', 'invalid_value'],
  ['tool_choice required without tools', { ...base, tool_choice: 'required' }, 'tool_choice', 'invalid_value'],
  [
    'tool_choice naming an unknown function',
    { ...base, tools: [fn('f')], tool_choice: { type: 'function', function: { name: 'g' } } },
    'tool_choice.function.name',
    'invalid_value',
  ],
  ['response_format unknown type', { ...base, response_format: { type: 'xml' } }, 'response_format.type', 'invalid_value'],
  [
    'json_schema without schema',
    { ...base, response_format: { type: 'json_schema', json_schema: { name: 'x' } } },
    'response_format.json_schema.schema',
    'missing_required_parameter',
  ],
  [
    'json_schema strict not boolean',
    { ...base, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {}, strict: 'yes' } } },
    'response_format.json_schema.strict',
    'invalid_value',
  ],
  ['reasoning_effort unknown', { ...base, reasoning_effort: 'extreme' }, 'reasoning_effort', 'invalid_value'],
  ['user not a string', { ...base, user: 5 }, 'user', 'invalid_value'],
  ['extra_body group not an object', { ...base, extra_body: { cloud_a: 5 } }, 'extra_body.cloud_a', 'invalid_value'],
  ['six fallback models', { ...base, models: ['a', 'b', 'c', 'd', 'e', 'f'] }, 'models', 'invalid_value'],
  ['an empty fallback model', { ...base, models: ['gateway/atlas-4-5', ''] }, 'models[1]', 'invalid_value'],
  ['provider.sort unknown', { ...base, provider: { sort: 'random' } }, 'provider.sort', 'invalid_value'],
  ['provider.allow_fallbacks not boolean', { ...base, provider: { allow_fallbacks: 'no' } }, 'provider.allow_fallbacks', 'invalid_value'],
  ['gateway.cache unknown', { ...base, gateway: { cache: 'yes' } }, 'gateway.cache', 'invalid_value'],
  ['gateway.cache_ttl unknown', { ...base, gateway: { cache_ttl: '2h' } }, 'gateway.cache_ttl', 'invalid_value'],
  ['gateway.provider.sort unknown', { ...base, gateway: { provider: { sort: 'cheapest' } } }, 'gateway.provider.sort', 'invalid_value'],
  ['an unknown top-level field', { ...base, logit_bias_v2: { 1: 2 } }, 'logit_bias_v2', 'invalid_value'],
  ['a field of the OpenAI API the gateway refuses', { ...base, logit_bias: { 1: 2 } }, 'logit_bias', 'unsupported_parameter'],
];

describe('chat completions request validation', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway();
  });
  after(() => gateway.close());

  for (const [description, body, param, code] of INVALID) {
    test(`400 for ${description} (param ${param})`, async () => {
      const response = await call(gateway.app, 'POST', '/v1/chat/completions', { key: gateway.apiKey, json: body });
      assertError(response, { status: 400, type: 'invalid_request_error', code, param });
    });
  }

  test('nothing was reserved or charged by any rejected request', async () => {
    const snapshot = await ledger(gateway);
    assert.equal(snapshot.entries.filter((entry) => entry.kind === 'charge').length, 0);
    assert.equal(snapshot.balance.reserved, 0n);
  });

  test('the limits themselves are accepted: 1000 messages, 1000 parts, 4 stops, 512 tools, 5 models, n = 1, max_tokens 200000 capped by the route', async () => {
    const ok = async (body: Record<string, unknown>) => {
      const response = await call(gateway.app, 'POST', '/v1/chat/completions', { key: gateway.apiKey, json: { ...base, ...body } });
      assert.equal(response.status, 200, response.text);
    };
    await ok({ messages: Array.from({ length: 1000 }, () => user()) });
    await ok({ messages: [user(Array.from({ length: 1000 }, () => ({ type: 'text', text: 'x' })))] });
    await ok({ stop: ['a', 'b', 'c', 'd'], n: 1, stream: false, max_completion_tokens: 5, max_tokens: 6 });
    await ok({ tools: Array.from({ length: 512 }, (_, index) => fn(`f${index}`)), tool_choice: 'none' });
    await ok({ models: ['a', 'b', 'c', 'd', 'e'], provider: { sort: 'latency', only: ['x'], order: ['y'], ignore: ['z'] } });
    await ok({ temperature: 0, top_p: 1, presence_penalty: -2, frequency_penalty: 2, seed: 42, user: 'u-1', gateway: { cache: 'off', cache_ttl: '1h' } });
    // 200000 is a valid value for the field; this route allows 64000, so the route rejects it.
    const capped = await call(gateway.app, 'POST', '/v1/chat/completions', { key: gateway.apiKey, json: { ...base, max_tokens: 200000 } });
    assertError(capped, { status: 400, type: 'invalid_request_error', code: 'unsupported_parameter', param: 'max_tokens' });
  });

  test('an unauthenticated request is a 401 before its body is looked at', async () => {
    const response = await call(gateway.app, 'POST', '/v1/chat/completions', { json: { nonsense: true } });
    assertError(response, { status: 401, type: 'authentication_error' });
  });

  test('a key without the chat scope is a 403', async () => {
    const key = await gateway.createKey({ scopes: ['models:read'] });
    const response = await call(gateway.app, 'POST', '/v1/chat/completions', { key, json: base });
    assertError(response, { status: 403, type: 'permission_error' });
  });

  test('malformed JSON is a 400', async () => {
    const response = await call(gateway.app, 'POST', '/v1/chat/completions', {
      key: gateway.apiKey,
      headers: { 'content-type': 'application/json' },
      body: '{"model":',
    });
    assertError(response, { status: 400, type: 'invalid_request_error', code: 'invalid_json' });
  });
});
