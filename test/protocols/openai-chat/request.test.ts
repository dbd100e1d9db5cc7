import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CanonicalRequest } from '../../../src/canonical/index.ts';
import { buildChatRequest, chatBody } from '../../../src/protocols/openai-chat/request.ts';
import { simulatorEndpoint } from '../../simulators/endpoint.ts';
import { canonicalRequest as request } from '../helpers.ts';

const user = { role: 'user', content: 'Hi' };

describe('openai chat: canonical request → upstream body', () => {
  const rows: { name: string; request: CanonicalRequest; stream?: boolean; expected: object }[] = [
    { name: 'minimal', request: request({}), expected: { model: 'up-model', messages: [user] } },
    {
      name: 'system blocks lead as system messages',
      request: request({ system: [{ text: 'Be brief.' }, { text: 'Be kind.' }] }),
      expected: { model: 'up-model', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'system', content: 'Be kind.' }, user] },
    },
    {
      name: 'sampling and length fields',
      request: request({ maxOutputTokens: 50, temperature: 0.2, topP: 0.9, stop: ['END'], presencePenalty: 0.5, frequencyPenalty: -0.5, seed: 7, logprobs: false, topLogprobs: 0, user: 'u-1' }),
      expected: { model: 'up-model', messages: [user], max_completion_tokens: 50, temperature: 0.2, top_p: 0.9, stop: ['END'], presence_penalty: 0.5, frequency_penalty: -0.5, seed: 7, logprobs: false, top_logprobs: 0, user: 'u-1' },
    },
    {
      name: 'streaming always asks for usage',
      request: request({ stream: true, includeUsage: false }),
      stream: true,
      expected: { model: 'up-model', messages: [user], stream: true, stream_options: { include_usage: true } },
    },
    {
      name: 'tools, named tool choice, no parallel calls',
      request: request({
        tools: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true }],
        toolChoice: { kind: 'tool', name: 'get_weather' },
        parallelToolCalls: false,
      }),
      expected: {
        model: 'up-model',
        messages: [user],
        tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true } }],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        parallel_tool_calls: false,
      },
    },
    {
      name: 'json_schema response format and reasoning effort',
      request: request({ responseFormat: { kind: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true }, reasoning: { kind: 'effort', effort: 'none' } }),
      expected: {
        model: 'up-model',
        messages: [user],
        response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
        reasoning_effort: 'none',
      },
    },
    {
      name: 'web search is a request option',
      request: request({ webSearch: true }),
      expected: { model: 'up-model', messages: [user], web_search_options: {} },
    },
    {
      name: 'tool loop: assistant tool calls with extra_content, tool results, reasoning not sent back',
      request: request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBO' }, detail: 'low' }] },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'thinking' },
              { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', extraContent: { google: { thought_signature: 'sig' } } },
            ],
          },
          { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_1', content: [{ type: 'text', text: '18C' }] }] },
        ],
      }),
      expected: {
        model: 'up-model',
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBO', detail: 'low' } }] },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: { google: { thought_signature: 'sig' } } }] },
          { role: 'tool', tool_call_id: 'call_1', content: '18C' },
        ],
      },
    },
    {
      name: 'tool results inside a user turn (messages dialect) become tool messages before the text',
      request: request({
        dialect: 'messages',
        messages: [{ role: 'user', content: [{ type: 'tool_result', toolCallId: 'toolu_1', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }, { type: 'text', text: 'Thanks' }] }],
      }),
      expected: {
        model: 'up-model',
        messages: [
          { role: 'tool', tool_call_id: 'toolu_1', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
          { role: 'user', content: 'Thanks' },
        ],
      },
    },
    {
      name: 'messages-dialect disabled thinking sends no effort (that API\'s default)',
      request: request({ dialect: 'messages', reasoning: { kind: 'disabled' } }),
      expected: { model: 'up-model', messages: [user] },
    },
  ];
  for (const row of rows) {
    test(row.name, () => {
      assert.deepEqual(chatBody(row.request, 'up-model', row.stream ?? false), row.expected);
    });
  }

  test('a thinking budget has no Chat equivalent: 400 naming the client field', () => {
    assert.throws(() => chatBody(request({ dialect: 'messages', reasoning: { kind: 'budget', budgetTokens: 2048 } }), 'm', false), {
      status: 400,
      code: 'unsupported_parameter',
      param: 'thinking',
    });
  });

  test('URL, bearer key and headers', () => {
    const endpoint = simulatorEndpoint({ kind: 'openai', base_url: 'http://127.0.0.1:9/v1/' }, 'up-model');
    const wire = buildChatRequest(request({}), endpoint, 'sk-1', true);
    assert.equal(wire.url, 'http://127.0.0.1:9/v1/chat/completions');
    assert.equal(wire.headers.authorization, 'Bearer sk-1');
    assert.equal(wire.headers.accept, 'text/event-stream');
    assert.equal(buildChatRequest(request({}), endpoint, undefined, false).headers.authorization, undefined);
  });
});
