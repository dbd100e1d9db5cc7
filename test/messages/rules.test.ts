/**
 * POST /v1/messages over real HTTP: every limit of the body's table and malformed input is a 400 in
 * the error envelope (with Anthropic's top-level `"type": "error"`), and the rules of
 * docs/messages.md (thinking modes, sampling, strict tools, no server tools) are 400s naming the
 * client's field on routes whose capabilities make them bite. Nothing is reserved or charged for any
 * of them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CapabilitiesConfig } from '../../src/config/schema.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call, type JsonResponse } from '../helpers/http.ts';
import { endpoint, FULL_CAPABILITIES, ledger, model, simulatedConfig } from '../chat/helpers.ts';

const limited = (capabilities: CapabilitiesConfig) => ({ ...FULL_CAPABILITIES, ...capabilities });

const config = simulatedConfig([
  model('gateway/full', [endpoint('sim-full', { capabilities: limited({ thinking_manual: true, thinking_adaptive: true, thinking_disable: true }) })]),
  model('gateway/adaptive-only', [
    endpoint('sim-adaptive', { capabilities: limited({ thinking_manual: false, thinking_adaptive: true, thinking_disable: false }) }),
  ]),
  model('gateway/manual-only', [endpoint('sim-manual', { capabilities: limited({ thinking_manual: true, thinking_adaptive: false }) })]),
  model('gateway/no-sampling', [endpoint('sim-no-sampling', { capabilities: limited({ sampling: false }) })]),
  model('gateway/no-strict', [endpoint('sim-no-strict', { capabilities: limited({ structured_outputs: true, strict_tools: false }) })]),
  model('gateway/no-parallel', [endpoint('sim-no-parallel', { capabilities: limited({ parallel_tool_calls: false }) })]),
  model('gateway/text-only', [endpoint('sim-text-only', { capabilities: limited({ vision: false }) })]),
  model('gateway/small', [endpoint('sim-small', { limits: { max_tokens: 100, context_window: 200000 } })]),
]);

const user = [{ role: 'user', content: 'hello' }];
const tool = { name: 'lookup', input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } };

/** The envelope of a messages answer: the gateway's error object beside `type: "error"`. */
function assertMessagesError(response: JsonResponse, expected: { status: number; code: string; param: string | null }): void {
  assert.equal(response.body.type, 'error', response.text);
  const { type: _type, ...envelope } = response.body;
  assertError({ ...response, body: envelope }, { type: 'invalid_request_error', ...expected });
}

describe('POST /v1/messages: validation and rules', () => {
  let gateway: TestGateway;
  let balanceBefore: bigint;
  let accepted = 0;
  before(async () => {
    gateway = await startGateway({ config });
    balanceBefore = (await ledger(gateway)).balance.balance;
  });
  after(() => gateway.close());

  const post = (body: Record<string, unknown>) =>
    call(gateway.baseUrl, 'POST', '/v1/messages', {
      headers: { 'x-api-key': gateway.apiKey, 'anthropic-version': '2023-06-01' },
      json: { model: 'gateway/full', max_tokens: 4096, messages: user, ...body },
    });
  const invalid = async (body: Record<string, unknown>, param: string | null, code = 'invalid_value') =>
    assertMessagesError(await post(body), { status: 400, code, param });
  const unsupported = async (body: Record<string, unknown>, param: string) => invalid(body, param, 'unsupported_parameter');
  const accepts = async (body: Record<string, unknown>) => {
    const response = await post(body);
    assert.equal(response.status, 200, response.text);
    accepted++;
  };

  test('required fields, wrong JSON types (never coerced) and unknown fields', async () => {
    await invalid({ max_tokens: undefined }, 'max_tokens', 'missing_required_parameter');
    await invalid({ model: undefined }, 'model', 'missing_required_parameter');
    await invalid({ model: '' }, 'model');
    await invalid({ max_tokens: '100' }, 'max_tokens');
    await invalid({ max_tokens: 1.5 }, 'max_tokens');
    await invalid({ stream: 'true' }, 'stream');
    await invalid({ temperature: '0.5' }, 'temperature');
    await invalid({ system: 5 }, 'system');
    await invalid({ system: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }, 'system[0].type');
    await invalid({ messages: 'hello' }, 'messages');
    await invalid({ messages: [] }, 'messages');
    await invalid({ messages: [{ role: 'system', content: 'x' }] }, 'messages[0].role');
    await invalid({ messages: [{ role: 'user', content: [] }] }, 'messages[0].content');
    await invalid({ metadata: { user_id: 5 } }, 'metadata.user_id');
    await invalid({ n: 1 }, 'n');
    await invalid({ response_format: { type: 'json_object' } }, 'response_format');
    await invalid({ thinking: { type: 'enabled', budget_tokens: 2048, display: 'omitted' } }, 'thinking.display');
  });

  test('ranges and limits of the table', async () => {
    await invalid({ max_tokens: 0 }, 'max_tokens');
    await invalid({ max_tokens: 200_001 }, 'max_tokens');
    await invalid({ temperature: 1.01 }, 'temperature');
    await invalid({ temperature: -0.1 }, 'temperature');
    await invalid({ top_p: 1.5 }, 'top_p');
    await invalid({ top_k: 0 }, 'top_k');
    await invalid({ stop_sequences: Array.from({ length: 9 }, (_, index) => `s${index}`) }, 'stop_sequences');
    await invalid({ stop_sequences: [1] }, 'stop_sequences[0]');
    await invalid({ models: ['a', 'b', 'c', 'd', 'e', 'f'] }, 'models');
    await invalid({ models: [''] }, 'models[0]');
    await invalid({ thinking: { type: 'enabled', budget_tokens: 1023 } }, 'thinking.budget_tokens');
    await invalid({ max_tokens: 200_000, thinking: { type: 'enabled', budget_tokens: 200_000 } }, 'thinking.budget_tokens');
    await invalid({ thinking: { type: 'enabled' } }, 'thinking.budget_tokens', 'missing_required_parameter');
    await invalid({ thinking: { type: 'auto' } }, 'thinking.type');
    await invalid({ tool_choice: { type: 'required' } }, 'tool_choice.type');
    await invalid({ gateway: { cache_ttl: '2h' } }, 'gateway.cache_ttl');
    await accepts({ stop_sequences: Array.from({ length: 8 }, (_, index) => `s${index}`), models: ['a', 'b', 'c', 'd', 'e'] });
  });

  test('unknown block types, malformed blocks and malformed tool input', async () => {
    const content = (block: unknown) => ({ messages: [{ role: 'user', content: [block] }] });
    await invalid(content({ type: 'audio', data: 'x' }), 'messages[0].content[0].type');
    await invalid(content({ type: 'text' }), 'messages[0].content[0].text', 'missing_required_parameter');
    await invalid(content({ type: 'text', text: 'x', cache_control: { type: 'persistent' } }), 'messages[0].content[0].cache_control.type');
    await invalid(content({ type: 'text', text: 'x', cache_control: { type: 'ephemeral', ttl: '10m' } }), 'messages[0].content[0].cache_control.ttl');
    await invalid(content({ type: 'image', source: { type: 'base64', media_type: 'image/tiff', data: 'AAAA' } }), 'messages[0].content[0].source.media_type');
    await invalid(content({ type: 'image', source: { type: 'url', url: 'ftp://x/y.png' } }), 'messages[0].content[0].source.url');
    await invalid(content({ type: 'document', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }), 'messages[0].content[0].source.media_type');
    await invalid(content({ type: 'tool_result', tool_use_id: 't', content: [{ type: 'document', source: {} }] }), 'messages[0].content[0].content[0].type');
    await invalid(content({ type: 'tool_use', id: 't', name: 'f', input: {} }), 'messages[0].content[0].type');
    const assistant = (block: unknown) => ({ messages: [...user, { role: 'assistant', content: [block] }] });
    await invalid(assistant({ type: 'tool_use', id: 't', name: 'f', input: '{"q":1}' }), 'messages[1].content[0].input');
    await invalid(assistant({ type: 'tool_use', id: 't', name: 'f', input: [1] }), 'messages[1].content[0].input');
    await invalid(assistant({ type: 'tool_use', id: 't', name: 'f' }), 'messages[1].content[0].input', 'missing_required_parameter');
    await invalid(assistant({ type: 'thinking', thinking: 'x' }), 'messages[1].content[0].signature', 'missing_required_parameter');
    await invalid(assistant({ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }), 'messages[1].content[0].type');
    await invalid({ tools: [{ name: 'bad name', input_schema: { type: 'object' } }] }, 'tools[0].name');
    await invalid({ tools: [{ name: 'f', input_schema: { type: 'string' } }] }, 'tools[0].input_schema.type');
    await invalid({ tools: [{ name: 'f' }] }, 'tools[0].input_schema', 'missing_required_parameter');
    await invalid({ tools: [tool], tool_choice: { type: 'tool', name: 'other' } }, 'tool_choice.name');
    await invalid({ tool_choice: { type: 'any' } }, 'tool_choice');
  });

  test('a body that is not JSON, or not an object', async () => {
    const raw = (body: string) =>
      call(gateway.baseUrl, 'POST', '/v1/messages', { headers: { 'x-api-key': gateway.apiKey, 'content-type': 'application/json' }, body });
    assertMessagesError(await raw('{"model":'), { status: 400, code: 'invalid_json', param: null });
    assertMessagesError(await raw('[1]'), { status: 400, code: 'invalid_value', param: null });
  });

  test('rule 2: thinking modes where the route supports them; never resized; no forced tool with manual thinking', async () => {
    const manual = { type: 'enabled', budget_tokens: 2048 };
    await unsupported({ model: 'gateway/adaptive-only', thinking: manual }, 'thinking');
    await unsupported({ model: 'gateway/manual-only', thinking: { type: 'adaptive' } }, 'thinking');
    await unsupported({ model: 'gateway/adaptive-only', thinking: { type: 'disabled' } }, 'thinking');
    await invalid({ model: 'gateway/full', max_tokens: 2048, thinking: manual }, 'thinking.budget_tokens');
    await unsupported({ model: 'gateway/full', tools: [tool], tool_choice: { type: 'any' }, thinking: manual }, 'tool_choice');
    await unsupported({ model: 'gateway/full', tools: [tool], tool_choice: { type: 'tool', name: 'lookup' }, thinking: manual }, 'tool_choice');
    await accepts({ model: 'gateway/full', tools: [tool], tool_choice: { type: 'auto' }, thinking: manual });
    await accepts({ model: 'gateway/manual-only', thinking: manual });
    await accepts({ model: 'gateway/adaptive-only', thinking: { type: 'adaptive' } });
    await accepts({ model: 'gateway/full', thinking: { type: 'disabled' } });
  });

  test('rule 3: temperature, top_p and top_k are refused where sampling is false', async () => {
    await unsupported({ model: 'gateway/no-sampling', temperature: 0.5 }, 'temperature');
    await unsupported({ model: 'gateway/no-sampling', top_p: 0.5 }, 'top_p');
    await unsupported({ model: 'gateway/no-sampling', top_k: 5 }, 'top_k');
    await accepts({ model: 'gateway/no-sampling' });
    await accepts({ model: 'gateway/full', temperature: 1, top_p: 0.5, top_k: 5 });
  });

  test('rule 4: strict tools need strict tool support, not JSON structured output alone', async () => {
    await unsupported({ model: 'gateway/no-strict', tools: [tool, { ...tool, name: 'other', strict: true }] }, 'tools[1].strict');
    await accepts({ model: 'gateway/no-strict', tools: [tool] });
    await accepts({ model: 'gateway/full', tools: [{ ...tool, strict: true }] });
  });

  test('rule 5: web search and other server tools are refused', async () => {
    await unsupported({ tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }] }, 'tools[0]');
    await unsupported({ tools: [tool, { type: 'text_editor_20250124', name: 'str_replace_editor' }] }, 'tools[1]');
    await accepts({ tools: [{ ...tool, type: 'custom' }] });
  });

  test('capabilities and limits name the Messages fields', async () => {
    await unsupported(
      { model: 'gateway/no-parallel', tools: [tool], tool_choice: { type: 'auto', disable_parallel_tool_use: true } },
      'tool_choice.disable_parallel_tool_use',
    );
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } };
    await unsupported({ model: 'gateway/text-only', messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, image] }] }, 'messages[0].content[1]');
    await unsupported({ model: 'gateway/small', max_tokens: 101 }, 'max_tokens');
    await accepts({ model: 'gateway/small', max_tokens: 100 });
  });

  test('an unknown model is a 404 in the same shape', async () => {
    const response = await post({ model: 'gateway/nope' });
    assert.equal(response.status, 404);
    assert.equal(response.body.type, 'error');
    assert.equal(response.body.error.code, 'model_not_found');
  });

  test('every refusal above happened before credit moved: only accepted calls were charged', async () => {
    const snapshot = await ledger(gateway);
    assert.equal(snapshot.balance.reserved, 0n);
    const charges = snapshot.entries.filter((entry) => entry.kind === 'charge');
    // Each accepted call above is one charge; no refusal left one.
    assert.equal(charges.length, accepted);
    const charged = charges.reduce((sum, entry) => sum + entry.amount, 0n);
    assert.equal(snapshot.balance.balance, balanceBefore - charged);
  });
});
