import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CanonicalRequest } from '../../../src/canonical/index.ts';
import type { RouteEndpoint } from '../../../src/catalog/types.ts';
import { anthropicBody, buildAnthropicRequest, JSON_OBJECT_INSTRUCTION } from '../../../src/protocols/anthropic/request.ts';
import { simulatorEndpoint } from '../../simulators/endpoint.ts';
import { canonicalRequest as request } from '../helpers.ts';

function endpoint(overrides: Partial<RouteEndpoint> = {}): RouteEndpoint {
  return { ...simulatorEndpoint({ kind: 'anthropic', base_url: 'http://upstream.test/' }, 'claude-up'), ...overrides };
}

const user = { role: 'user', content: [{ type: 'text', text: 'Hi' }] };
const base = { model: 'claude-up', max_tokens: 4096, messages: [user] };
const weatherTool = { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };

describe('anthropic: canonical request → upstream body', () => {
  const rows: { name: string; request: CanonicalRequest; endpoint?: RouteEndpoint; stream?: boolean; expected: object }[] = [
    { name: 'minimal: max_tokens defaults to the bound the reservation assumed', request: request({}), expected: base },
    { name: 'max_tokens from the endpoint limit when the client gave none', request: request({}), endpoint: endpoint({ limits: { max_tokens: 64000 } }), expected: { ...base, max_tokens: 64000 } },
    {
      name: 'system hoisted as text blocks, cache_control kept',
      request: request({ system: [{ text: 'Be brief.' }, { text: 'Long instructions', cacheControl: { type: 'ephemeral', ttl: '1h' } }] }),
      expected: { ...base, system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Long instructions', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
    },
    {
      name: 'sampling only when present, stop sequences, user id, stream',
      request: request({ maxOutputTokens: 50, temperature: 0.2, topP: 0.9, topK: 40, stop: ['END'], user: 'u-1', stream: true }),
      stream: true,
      expected: { ...base, max_tokens: 50, temperature: 0.2, top_p: 0.9, top_k: 40, stop_sequences: ['END'], metadata: { user_id: 'u-1' }, stream: true },
    },
    {
      name: 'tools with input_schema (default when absent), strict, cache_control; named choice without parallel calls',
      request: request({
        tools: [{ ...weatherTool, strict: true }, { name: 'get_time', cacheControl: { type: 'ephemeral' } }],
        toolChoice: { kind: 'tool', name: 'get_weather' },
        parallelToolCalls: false,
      }),
      expected: {
        ...base,
        tools: [
          { name: 'get_weather', description: 'Weather', input_schema: weatherTool.parameters, strict: true },
          { name: 'get_time', input_schema: { type: 'object', properties: {} }, cache_control: { type: 'ephemeral' } },
        ],
        tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
      },
    },
    {
      name: 'parallelToolCalls=false without a choice → auto with disable_parallel_tool_use; required → any',
      request: request({ tools: [weatherTool], parallelToolCalls: false }),
      expected: { ...base, tools: [{ name: 'get_weather', description: 'Weather', input_schema: weatherTool.parameters }], tool_choice: { type: 'auto', disable_parallel_tool_use: true } },
    },
    {
      name: 'tool choice required → any',
      request: request({ tools: [weatherTool], toolChoice: { kind: 'required' } }),
      expected: { ...base, tools: [{ name: 'get_weather', description: 'Weather', input_schema: weatherTool.parameters }], tool_choice: { type: 'any' } },
    },
    {
      name: 'tool loop: consecutive tool results and the following text in one user turn, results first; thinking replayed only when Anthropic-signed',
      request: request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather and time?' }] },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'I should call both.', signature: { family: 'anthropic', value: 'sig-a' } },
              { type: 'reasoning', text: '', redacted: true, signature: { family: 'anthropic', value: 'redacted-data' } },
              { type: 'reasoning', text: 'from another provider', signature: { family: 'gemini', value: 'g' } },
              { type: 'reasoning', text: 'unsigned' },
              { type: 'text', text: '' },
              { type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
              { type: 'tool_call', id: 'toolu_2', name: 'get_time', arguments: '{}' },
            ],
          },
          { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'toolu_1', content: [{ type: 'text', text: '18C' }] }] },
          { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'toolu_2', content: [], isError: true }] },
          { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
        ],
      }),
      expected: {
        ...base,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather and time?' }] },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'I should call both.', signature: 'sig-a' },
              { type: 'redacted_thinking', data: 'redacted-data' },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
              { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '18C' }] },
              { type: 'tool_result', tool_use_id: 'toolu_2', is_error: true },
              { type: 'text', text: 'Thanks' },
            ],
          },
        ],
      },
    },
    {
      name: 'a chat client\'s replayed turn (text and tool calls, no reasoning) starts with the thinking its tool call carries',
      request: request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Let me check.' },
              {
                type: 'tool_call',
                id: 'toolu_1',
                name: 'get_weather',
                arguments: '{"city":"Paris"}',
                signature: { family: 'anthropic', value: JSON.stringify([{ type: 'thinking', thinking: 'Call it.', signature: 'sig-t' }, { type: 'redacted_thinking', data: 'r' }]) },
              },
            ],
          },
          { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'toolu_1', content: [{ type: 'text', text: '18C' }] }] },
        ],
      }),
      expected: {
        ...base,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Call it.', signature: 'sig-t' },
              { type: 'redacted_thinking', data: 'r' },
              { type: 'text', text: 'Let me check.' },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '18C' }] }] },
        ],
      },
    },
    {
      name: 'signed reasoning replayed by the client wins over what the tool call carries; a foreign or unreadable carrier adds nothing',
      request: request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'x' }] },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'Mine.', signature: { family: 'anthropic', value: 'sig-own' } },
              { type: 'tool_call', id: 't1', name: 'f', arguments: '{}', signature: { family: 'anthropic', value: JSON.stringify([{ type: 'thinking', thinking: 'Call it.', signature: 'sig-t' }]) } },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', toolCallId: 't1', content: [] }] },
          { role: 'assistant', content: [{ type: 'tool_call', id: 't2', name: 'f', arguments: '{}', signature: { family: 'anthropic', value: 'not json' } }] },
          { role: 'user', content: [{ type: 'tool_result', toolCallId: 't2', content: [] }] },
        ],
      }),
      expected: {
        ...base,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'x' }] },
          { role: 'assistant', content: [{ type: 'thinking', thinking: 'Mine.', signature: 'sig-own' }, { type: 'tool_use', id: 't1', name: 'f', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1' }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't2', name: 'f', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't2' }] },
        ],
      },
    },
    {
      name: 'a user turn holding text before its tool results (messages dialect) still leads with the results',
      request: request({
        dialect: 'messages',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'here:' }, { type: 'tool_result', toolCallId: 't', content: [{ type: 'text', text: 'ok' }] }] }],
      }),
      expected: { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'ok' }] }, { type: 'text', text: 'here:' }] }] },
    },
    {
      name: 'images (base64 and URL), documents (PDF and text)',
      request: request({
        messages: [{
          role: 'user',
          content: [
            { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBO' } },
            { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg' } },
            { type: 'document', mediaType: 'application/pdf', data: 'JVBE', title: 'report.pdf' },
            { type: 'document', mediaType: 'text/plain', data: 'plain words' },
          ],
        }],
      }),
      expected: {
        ...base,
        messages: [{
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBO' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' }, title: 'report.pdf' },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' } },
          ],
        }],
      },
    },
    {
      name: 'json_schema → output_config.format',
      request: request({ responseFormat: { kind: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } }),
      expected: { ...base, output_config: { format: { type: 'json_schema', schema: { type: 'object' } } } },
    },
    {
      name: 'json_object → a best-effort instruction after the system blocks',
      request: request({ system: [{ text: 'Be brief.' }], responseFormat: { kind: 'json_object' } }),
      expected: { ...base, system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: JSON_OBJECT_INSTRUCTION }] },
    },
    { name: 'text response format changes nothing', request: request({ responseFormat: { kind: 'text' } }), expected: base },
  ];
  for (const row of rows) {
    test(row.name, () => {
      assert.deepEqual(anthropicBody(row.request, row.endpoint ?? endpoint(), row.stream ?? false), row.expected);
    });
  }

  test('tool-call arguments that do not parse to an object are a 400 naming the conversation, never {}', () => {
    for (const bad of ['{"city":', '', '[1]', 'null']) {
      const broken = request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'x' }] },
          { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'f', arguments: bad }] },
        ],
      });
      assert.throws(() => anthropicBody(broken, endpoint(), false), { status: 400, code: 'invalid_value', param: 'messages' });
    }
  });

  test('URL is base_url + /v1/messages; x-api-key and anthropic-version headers', () => {
    const wire = buildAnthropicRequest(request({}), endpoint(), 'sk-ant', true);
    assert.equal(wire.url, 'http://upstream.test/v1/messages');
    assert.deepEqual(wire.headers, { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-ant', accept: 'text/event-stream' });
    assert.equal(buildAnthropicRequest(request({}), simulatorEndpoint({ kind: 'anthropic' }), undefined, false).url, 'https://api.anthropic.com/v1/messages');
  });
});

describe('anthropic: reasoning controls', () => {
  const thinking = (fields: Partial<CanonicalRequest>, at: RouteEndpoint = endpoint()) => {
    const body = anthropicBody(request(fields), at, false);
    return { thinking: body.thinking, output_config: body.output_config, max_tokens: body.max_tokens };
  };

  test('a budget, adaptive and disabled are sent as given', () => {
    assert.deepEqual(thinking({ dialect: 'messages', maxOutputTokens: 4000, reasoning: { kind: 'budget', budgetTokens: 2048 } }).thinking, { type: 'enabled', budget_tokens: 2048 });
    assert.deepEqual(thinking({ dialect: 'messages', reasoning: { kind: 'adaptive' } }).thinking, { type: 'adaptive' });
    assert.deepEqual(thinking({ dialect: 'messages', reasoning: { kind: 'disabled' } }).thinking, { type: 'disabled' });
  });

  test('a budget outside 1024 ≤ budget < max_tokens is refused, never resized', () => {
    for (const budgetTokens of [1000, 4000, 5000]) {
      assert.throws(() => thinking({ dialect: 'messages', maxOutputTokens: 4000, reasoning: { kind: 'budget', budgetTokens } }), {
        status: 400,
        code: 'unsupported_parameter',
        param: 'thinking',
      });
    }
  });

  test('effort none → thinking disabled', () => {
    assert.deepEqual(thinking({ reasoning: { kind: 'effort', effort: 'none' } }), { thinking: { type: 'disabled' }, output_config: undefined, max_tokens: 4096 });
  });

  test('effort levels → a share of max_tokens as the budget (¼, ½, ¾), at least 1024', () => {
    const budget = (effort: 'low' | 'medium' | 'high', maxOutputTokens?: number) =>
      thinking({ maxOutputTokens, reasoning: { kind: 'effort', effort } }).thinking;
    assert.deepEqual(budget('low', 16000), { type: 'enabled', budget_tokens: 4000 });
    assert.deepEqual(budget('medium', 16000), { type: 'enabled', budget_tokens: 8000 });
    assert.deepEqual(budget('high', 16000), { type: 'enabled', budget_tokens: 12000 });
    assert.deepEqual(budget('low'), { type: 'enabled', budget_tokens: 1024 });
    assert.deepEqual(budget('low', 2000), { type: 'enabled', budget_tokens: 1024 });
  });

  test('an effort that leaves no room for the minimum budget is a 400 naming reasoning_effort', () => {
    assert.throws(() => thinking({ maxOutputTokens: 1024, reasoning: { kind: 'effort', effort: 'high' } }), {
      status: 400,
      code: 'unsupported_parameter',
      param: 'reasoning_effort',
    });
  });

  test('on a model without manual thinking, an effort → adaptive thinking + output_config.effort', () => {
    const adaptiveOnly = endpoint({ capabilities: { thinking_manual: false } });
    assert.deepEqual(thinking({ reasoning: { kind: 'effort', effort: 'medium' }, responseFormat: { kind: 'json_schema', name: 'a', schema: { type: 'object' } } }, adaptiveOnly), {
      thinking: { type: 'adaptive' },
      output_config: { effort: 'medium', format: { type: 'json_schema', schema: { type: 'object' } } },
      max_tokens: 4096,
    });
  });
});

describe('anthropic: the gateway cache option', () => {
  const conversation = request({
    system: [{ text: 'sys 1' }, { text: 'sys 2' }],
    tools: [weatherTool, { name: 'get_time' }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'first' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'reply' }] },
      { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
    ],
  });
  const marks = (fields: Partial<CanonicalRequest>) => {
    const body = anthropicBody({ ...conversation, ...fields }, endpoint(), false);
    return {
      tools: body.tools?.map((tool) => tool.cache_control),
      system: body.system?.map((block) => block.cache_control),
      messages: body.messages.map((message) => message.content.map((block) => ('cache_control' in block ? block.cache_control : undefined))),
    };
  };
  const ttl1h = { type: 'ephemeral', ttl: '1h' };

  test('absent: nothing added', () => {
    assert.deepEqual(marks({}), { tools: [undefined, undefined], system: [undefined, undefined], messages: [[undefined], [undefined], [undefined, undefined]] });
  });

  test('on: the last user block, the last system block and the last tool, with the ttl', () => {
    assert.deepEqual(marks({ cache: { mode: 'on', ttl: '1h' } }), {
      tools: [undefined, ttl1h],
      system: [undefined, ttl1h],
      messages: [[undefined], [undefined], [undefined, ttl1h]],
    });
    assert.deepEqual(marks({ cache: { ttl: '5m' } }).system, [undefined, { type: 'ephemeral', ttl: '5m' }]);
    assert.deepEqual(marks({ cache: { mode: 'on' } }).tools, [undefined, { type: 'ephemeral' }]);
  });

  test('on: the client\'s own breakpoints count toward the limit of four and are kept', () => {
    const own = { type: 'ephemeral' as const };
    const result = marks({
      cache: { mode: 'on', ttl: '1h' },
      system: [{ text: 'sys 1', cacheControl: own }, { text: 'sys 2' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'first', cacheControl: own }] },
        { role: 'assistant', content: [{ type: 'text', text: 'reply' }] },
        { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b', cacheControl: own }] },
      ],
    });
    // Three of the client's, so one more: the last user block already has one, the last system block gets it.
    assert.deepEqual(result, { tools: [undefined, undefined], system: [own, ttl1h], messages: [[own], [undefined], [undefined, own]] });
  });

  test('off: every breakpoint removed, the client\'s included', () => {
    const own = { type: 'ephemeral' as const };
    assert.deepEqual(
      marks({
        cache: { mode: 'off' },
        system: [{ text: 'sys', cacheControl: own }],
        tools: [{ name: 't', cacheControl: own }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cacheControl: own }] }],
      }),
      { tools: [undefined], system: [undefined], messages: [[undefined]] },
    );
  });
});
