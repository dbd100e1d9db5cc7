import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CanonicalRequest } from '../../../src/canonical/index.ts';
import { openAIResponsesTranslator } from '../../../src/protocols/openai-responses/index.ts';
import { buildResponsesRequest, responsesBody } from '../../../src/protocols/openai-responses/request.ts';
import { simulatorEndpoint } from '../../simulators/endpoint.ts';
import { canonicalRequest as request } from '../helpers.ts';

const user = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] };

describe('openai responses: canonical request → upstream body', () => {
  const rows: { name: string; request: CanonicalRequest; stream?: boolean; expected: object }[] = [
    { name: 'minimal', request: request({}), expected: { model: 'up-model', input: [user] } },
    {
      name: 'system blocks become instructions',
      request: request({ system: [{ text: 'Be brief.' }, { text: 'Be kind.' }] }),
      expected: { model: 'up-model', input: [user], instructions: 'Be brief.\n\nBe kind.' },
    },
    {
      name: 'length, sampling, user, stream',
      request: request({ maxOutputTokens: 64, temperature: 0.3, topP: 0.8, user: 'u-1', stream: true }),
      stream: true,
      expected: { model: 'up-model', input: [user], max_output_tokens: 64, temperature: 0.3, top_p: 0.8, user: 'u-1', stream: true },
    },
    {
      name: 'flat function tools with explicit strict, tool choice, parallel calls, web search',
      request: request({
        tools: [{ name: 'get_weather', parameters: { type: 'object' } }, { name: 'lookup', description: 'Find', strict: true }],
        webSearch: true,
        toolChoice: { kind: 'tool', name: 'lookup' },
        parallelToolCalls: false,
      }),
      expected: {
        model: 'up-model',
        input: [user],
        tools: [
          { type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: false },
          { type: 'function', name: 'lookup', description: 'Find', parameters: null, strict: true },
          { type: 'web_search' },
        ],
        tool_choice: { type: 'function', name: 'lookup' },
        parallel_tool_calls: false,
      },
    },
    {
      name: 'json_schema sits flat in text.format; reasoning effort',
      request: request({ responseFormat: { kind: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true, description: 'An answer' }, reasoning: { kind: 'effort', effort: 'high' } }),
      expected: {
        model: 'up-model',
        input: [user],
        text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true, description: 'An answer' } },
        reasoning: { effort: 'high' },
      },
    },
    {
      name: 'json_object and required tool choice',
      request: request({ responseFormat: { kind: 'json_object' }, toolChoice: { kind: 'required' } }),
      expected: { model: 'up-model', input: [user], tool_choice: 'required', text: { format: { type: 'json_object' } } },
    },
    {
      name: 'tool loop: function_call and function_call_output items; OpenAI reasoning passed back by reference',
      request: request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } }] },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'Need weather.', signature: { family: 'openai', value: '{"id":"rs_1","encrypted_content":"enc"}' } },
              { type: 'reasoning', text: 'Anthropic thought', signature: { family: 'anthropic', value: 'sig' } },
              { type: 'text', text: 'Checking.' },
              { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
            ],
          },
          { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_1', content: [{ type: 'text', text: '18C' }] }] },
        ],
      }),
      expected: {
        model: 'up-model',
        input: [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather?' }, { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' }] },
          { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Need weather.' }], encrypted_content: 'enc' },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.', annotations: [] }] },
          { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'function_call_output', call_id: 'call_1', output: '18C' },
        ],
      },
    },
    {
      name: 'a tool result with an image is a list of input parts',
      request: request({
        dialect: 'messages',
        messages: [{ role: 'user', content: [{ type: 'tool_result', toolCallId: 't1', content: [{ type: 'text', text: 'chart:' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAA' } }] }] }],
      }),
      expected: {
        model: 'up-model',
        input: [{ type: 'function_call_output', call_id: 't1', output: [{ type: 'input_text', text: 'chart:' }, { type: 'input_image', image_url: 'data:image/png;base64,AAA', detail: 'auto' }] }],
      },
    },
  ];
  for (const row of rows) {
    test(row.name, () => {
      assert.deepEqual(responsesBody(row.request, 'up-model', row.stream ?? false), row.expected);
    });
  }

  test('chat rule 3: the parameters this route rejects are declared', () => {
    assert.deepEqual(
      [...openAIResponsesTranslator.unsupportedParameters].sort(),
      ['frequencyPenalty', 'logprobs', 'presencePenalty', 'seed', 'stop', 'topK', 'topLogprobs'],
    );
  });

  test('URL and bearer key', () => {
    const endpoint = simulatorEndpoint({ kind: 'openai-responses', base_url: 'http://127.0.0.1:9/v1' }, 'up-model');
    const wire = buildResponsesRequest(request({}), endpoint, 'sk-1', false);
    assert.equal(wire.url, 'http://127.0.0.1:9/v1/responses');
    assert.equal(wire.headers.authorization, 'Bearer sk-1');
  });
});
