/**
 * POST /v1/responses over real HTTP: every limit of the body's table and malformed input is a 400 in
 * the error envelope, the fields the endpoint does not implement are `unsupported_parameter` naming
 * them, and the capability rules of docs/responses.md are 400s naming the client's field on routes
 * whose capabilities make them bite. Nothing is reserved or charged for any of them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CapabilitiesConfig } from '../../src/config/schema.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { endpoint, FULL_CAPABILITIES, ledger, model, simulatedConfig } from '../chat/helpers.ts';

const limited = (capabilities: CapabilitiesConfig) => ({ ...FULL_CAPABILITIES, ...capabilities });

const config = simulatedConfig([
  model('gateway/full', [endpoint('sim-full')]),
  model('gateway/no-sampling', [endpoint('sim-no-sampling', { capabilities: limited({ sampling: false }) })]),
  model('gateway/no-strict', [endpoint('sim-no-strict', { capabilities: limited({ structured_outputs: true, strict_tools: false }) })]),
  model('gateway/text-only', [endpoint('sim-text-only', { capabilities: limited({ vision: false }) })]),
  model('gateway/small', [endpoint('sim-small', { limits: { max_tokens: 100, context_window: 200000 } })]),
  model('gateway/low-high', [endpoint('sim-low-high', { limits: { max_tokens: 1000, reasoning_efforts: ['low', 'high'] } })]),
]);

const parameters = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
const flat = { type: 'function', name: 'lookup', parameters };
const nested = { type: 'function', function: { name: 'lookup', parameters } };

describe('POST /v1/responses: validation and rules', () => {
  let gateway: TestGateway;
  let balanceBefore: bigint;
  let accepted = 0;
  before(async () => {
    gateway = await startGateway({ config });
    balanceBefore = (await ledger(gateway)).balance.balance;
  });
  after(() => gateway.close());

  const post = (body: Record<string, unknown>) =>
    call(gateway.baseUrl, 'POST', '/v1/responses', {
      headers: { authorization: `Bearer ${gateway.apiKey}` },
      json: { model: 'gateway/full', input: 'hello', ...body },
    });
  const invalid = async (body: Record<string, unknown>, param: string | null, code = 'invalid_value') =>
    assertError(await post(body), { status: 400, type: 'invalid_request_error', code, param });
  const unsupported = async (body: Record<string, unknown>, param: string) => invalid(body, param, 'unsupported_parameter');
  const accepts = async (body: Record<string, unknown>) => {
    const response = await post(body);
    assert.equal(response.status, 200, response.text);
    accepted++;
  };

  test('required fields, wrong JSON types (never coerced) and unknown fields', async () => {
    await invalid({ model: undefined }, 'model', 'missing_required_parameter');
    await invalid({ input: undefined }, 'input', 'missing_required_parameter');
    await invalid({ model: '' }, 'model');
    await invalid({ input: 5 }, 'input');
    await invalid({ input: [] }, 'input');
    await invalid({ max_output_tokens: '100' }, 'max_output_tokens');
    await invalid({ max_output_tokens: 1.5 }, 'max_output_tokens');
    await invalid({ stream: 'true' }, 'stream');
    await invalid({ background: 'true' }, 'background');
    await invalid({ temperature: '0.5' }, 'temperature');
    await invalid({ instructions: 5 }, 'instructions');
    await invalid({ user: 5 }, 'user');
    await invalid({ store: 'false' }, 'store');
    await invalid({ metadata: [] }, 'metadata');
    await invalid({ metadata: { k: 1 } }, 'metadata.k');
    await invalid({ reasoning: { effort: 'low', summary: 'long' } }, 'reasoning.summary');
    await invalid({ text: { verbosity: 'loud' } }, 'text.verbosity');
  });

  test('ranges and limits of the table', async () => {
    await invalid({ max_output_tokens: 0 }, 'max_output_tokens');
    await invalid({ temperature: 2.01 }, 'temperature');
    await invalid({ temperature: -0.1 }, 'temperature');
    await invalid({ top_p: 1.5 }, 'top_p');
    await invalid({ reasoning_effort: 'minimal' }, 'reasoning_effort');
    await invalid({ reasoning: { effort: 'xhigh' } }, 'reasoning.effort');
    await invalid({ models: ['a', 'b', 'c', 'd', 'e', 'f'] }, 'models');
    await invalid({ models: [''] }, 'models[0]');
    await invalid({ gateway: { cache_ttl: '2h' } }, 'gateway.cache_ttl');
    await invalid({ provider: { sort: 'cheapest' } }, 'provider.sort');
    await invalid({ tools: Array.from({ length: 513 }, (_, index) => ({ ...flat, name: `f${index}` })) }, 'tools');
    await accepts({ temperature: 2, top_p: 1, max_output_tokens: 1, models: ['a', 'b', 'c', 'd', 'e'], user: 'u-1' });
  });

  test('items, parts and tools: unknown types and malformed shapes name the field', async () => {
    const item = (value: unknown) => ({ input: [value] });
    await invalid(item({ role: 'tool', content: 'x' }), 'input[0].role');
    await invalid(item({ role: 'user' }), 'input[0].content', 'missing_required_parameter');
    await invalid(item({ role: 'user', content: [{ type: 'output_text', text: 'x' }] }), 'input[0].content[0].type');
    await invalid(item({ role: 'user', content: [{ type: 'input_text' }] }), 'input[0].content[0].text', 'missing_required_parameter');
    await invalid(item({ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }), 'input[0].content[0].image_url', 'missing_required_parameter');
    await invalid(item({ role: 'user', content: [{ type: 'input_image', image_url: 'ftp://x/y.png' }] }), 'input[0].content[0].image_url');
    await invalid(item({ role: 'system', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }), 'input[0].content[0].type');
    await invalid(item({ role: 'assistant', content: [{ type: 'input_text', text: 'x' }] }), 'input[0].content[0].type');
    await invalid(item({ type: 'file_search_call', id: 'fs_1' }), 'input[0].type');
    await invalid(item({ type: 'reasoning', summary: [], encrypted_content: 5 }), 'input[0].encrypted_content');
    await invalid(
      item({ type: 'function_call', call_id: 'c', name: 'f', arguments: '{}', x_gateway: { provider_data: 'p', other: 'x' } }),
      'input[0].x_gateway.other',
    );
    await invalid(item({ type: 'function_call', call_id: 'c', name: 'f' }), 'input[0].arguments', 'missing_required_parameter');
    await invalid(item({ type: 'function_call_output', call_id: 'c', output: 5 }), 'input[0].output');
    await invalid({ tools: [{ ...flat, name: 'bad name' }] }, 'tools[0].name');
    await invalid({ tools: [{ type: 'function' }] }, 'tools[0].name', 'missing_required_parameter');
    await invalid({ tools: [{ ...flat, strict: 'yes' }] }, 'tools[0].strict');
    await invalid({ tools: [{ type: 'function', function: { name: 'f' }, name: 'f' }] }, 'tools[0].name');
    await invalid({ tools: [{ type: 'file_search' }] }, 'tools[0].type');
    await invalid({ tools: [flat], tool_choice: { type: 'function', name: 'other' } }, 'tool_choice.name');
    await invalid({ tools: [flat], tool_choice: { type: 'function', function: { name: 'lookup' } } }, 'tool_choice.name', 'missing_required_parameter');
    await invalid({ tool_choice: 'required' }, 'tool_choice');
    await invalid({ reasoning_effort: 'low', reasoning: { effort: 'high' } }, 'reasoning.effort');
  });

  test('a conversation with every item kind, both tool shapes and the SDK spelling of the effort is accepted', async () => {
    await accepts({
      instructions: 'be brief',
      input: [
        { role: 'developer', content: 'rules' },
        { role: 'user', content: [{ type: 'input_text', text: 'weather?' }] },
        { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: 'checking', annotations: [] }] },
        { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":"Paris"}', id: 'fc_1', status: 'completed' },
        { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
      ],
      tools: [flat, { ...nested, function: { ...nested.function, name: 'other' } }],
      tool_choice: 'auto',
      reasoning: { effort: 'high' },
    });
  });

  test('what the endpoint does not implement: unsupported_parameter naming the field', async () => {
    // A background request follows the same rules, before anything is queued.
    await unsupported({ background: true, previous_response_id: 'resp_1' }, 'previous_response_id');
    await unsupported({ previous_response_id: 'resp_abc' }, 'previous_response_id');
    await unsupported({ response_format: { type: 'json_object' } }, 'response_format');
    await unsupported({ text: { format: { type: 'json_schema', name: 'x', schema: {} } } }, 'text.format');
    await unsupported({ parallel_tool_calls: true }, 'parallel_tool_calls');
    await unsupported({ tools: [flat, { type: 'web_search' }] }, 'tools[1]');
    await unsupported({ tools: [{ type: 'web_search_preview', search_context_size: 'low' }] }, 'tools[0]');
    await accepts({ background: false });
  });

  test('capability rules name the Responses fields', async () => {
    await unsupported({ model: 'gateway/no-sampling', temperature: 0.5 }, 'temperature');
    await unsupported({ model: 'gateway/no-sampling', top_p: 0.5 }, 'top_p');
    await unsupported({ model: 'gateway/no-strict', tools: [flat, { type: 'function', name: 'other', parameters, strict: true }] }, 'tools[1].strict');
    await unsupported(
      { model: 'gateway/no-strict', tools: [{ type: 'function', function: { name: 'f', parameters, strict: true } }] },
      'tools[0].function.strict',
    );
    await accepts({ model: 'gateway/no-strict', tools: [flat] });
    await accepts({ model: 'gateway/full', tools: [{ ...flat, strict: true }] });
    const image = { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' };
    await unsupported(
      {
        model: 'gateway/text-only',
        input: [
          { role: 'developer', content: 'd' },
          { role: 'user', content: [{ type: 'input_text', text: 'look' }, image] },
        ],
      },
      'input[1].content[1]',
    );
    await unsupported({ model: 'gateway/small', max_output_tokens: 101 }, 'max_output_tokens');
    await accepts({ model: 'gateway/small', max_output_tokens: 100 });
  });

  test('reasoning efforts: none is never changed; either spelling is named as sent', async () => {
    await unsupported({ model: 'gateway/low-high', reasoning_effort: 'none' }, 'reasoning_effort');
    await unsupported({ model: 'gateway/low-high', reasoning: { effort: 'none' } }, 'reasoning.effort');
    await unsupported({ model: 'gateway/low-high', reasoning: { effort: 'medium' } }, 'reasoning.effort');
    await accepts({ model: 'gateway/low-high', reasoning: { effort: 'low' } });
    await accepts({ model: 'gateway/low-high', reasoning_effort: 'high', reasoning: { effort: 'high' } });
  });

  test('/openapi.json describes the three routes from the schemas that validate them', async () => {
    const document = (await call(gateway.baseUrl, 'GET', '/openapi.json')).body;
    const body = document.paths['/v1/responses'].post.requestBody.content['application/json'].schema;
    assert.deepEqual(body.required, ['model', 'input']);
    assert.equal(body.additionalProperties, false);
    assert.equal(document.paths['/v1/responses/{id}'].get.parameters[0].name, 'id');
    assert.equal(document.paths['/v1/responses/{id}/cancel'].post.parameters[0].name, 'id');
    assert.match(body.properties.background.description, /queues the work/);
  });

  test('an unknown model is a 404', async () => {
    assertError(await post({ model: 'gateway/nope' }), { status: 404, type: 'invalid_request_error', code: 'model_not_found', param: 'model' });
  });

  test('every refusal above happened before credit moved: only accepted calls were charged', async () => {
    const snapshot = await ledger(gateway);
    assert.equal(snapshot.balance.reserved, 0n);
    const charges = snapshot.entries.filter((entry) => entry.kind === 'charge');
    assert.equal(charges.length, accepted);
    const charged = charges.reduce((sum, entry) => sum + entry.amount, 0n);
    assert.equal(snapshot.balance.balance, balanceBefore - charged);
  });
});
