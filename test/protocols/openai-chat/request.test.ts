import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CanonicalRequest } from '../../../src/canonical/index.ts';
import { buildChatRequest, chatBody } from '../../../src/protocols/openai-chat/request.ts';
import { simulatorEndpoint } from '../../simulators/endpoint.ts';
import { readJsonFixture } from '../../simulators/fixtures.ts';
import { canonicalRequest as request, rejectedField } from '../helpers.ts';

const here = import.meta.dirname;

describe('openai chat: canonical request → upstream body', () => {
  // Each fixture is the body as the upstream receives it, key order included.
  const rows: { name: string; request: CanonicalRequest; stream?: boolean; fixture: string }[] = [
    { name: 'minimal', request: request({}), fixture: 'request-minimal.json' },
    {
      name: 'system blocks lead as system messages',
      request: request({ system: [{ text: 'Be brief.' }, { text: 'Be kind.' }] }),
      fixture: 'request-system.json',
    },
    {
      name: 'sampling and length fields',
      request: request({
        maxOutputTokens: 50,
        temperature: 0.2,
        topP: 0.9,
        stop: ['END'],
        presencePenalty: 0.5,
        frequencyPenalty: -0.5,
        seed: 7,
        logprobs: false,
        topLogprobs: 0,
        user: 'u-1',
      }),
      fixture: 'request-sampling.json',
    },
    { name: 'logprobs with top alternatives', request: request({ logprobs: true, topLogprobs: 5 }), fixture: 'request-logprobs.json' },
    { name: 'streaming always asks for usage', request: request({ stream: true, includeUsage: false }), stream: true, fixture: 'request-stream.json' },
    {
      name: 'tools, named tool choice, no parallel calls',
      request: request({
        tools: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true }],
        toolChoice: { kind: 'tool', name: 'get_weather' },
        parallelToolCalls: false,
      }),
      fixture: 'request-tools.json',
    },
    {
      name: 'json_schema response format and reasoning effort',
      request: request({
        responseFormat: { kind: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true },
        reasoning: { kind: 'effort', effort: 'none' },
      }),
      fixture: 'request-structured.json',
    },
    { name: 'web search is a request option', request: request({ webSearch: true }), fixture: 'request-web-search.json' },
    {
      name: 'tool loop: assistant tool calls with extra_content, tool results, reasoning not sent back',
      request: request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Weather?' },
              { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBO' }, detail: 'low' },
            ],
          },
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
      fixture: 'request-tool-loop.json',
    },
    {
      name: 'tool results inside a user turn (messages dialect) become tool messages before the text',
      request: request({
        dialect: 'messages',
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                toolCallId: 'toolu_1',
                content: [
                  { type: 'text', text: 'a' },
                  { type: 'text', text: 'b' },
                ],
              },
              { type: 'text', text: 'Thanks' },
            ],
          },
        ],
      }),
      fixture: 'request-messages-tool-results.json',
    },
    {
      name: "messages-dialect disabled thinking sends no effort (that API's default)",
      request: request({ dialect: 'messages', reasoning: { kind: 'disabled' } }),
      fixture: 'request-minimal.json',
    },
  ];
  const endpoint = simulatorEndpoint({ kind: 'openai', base_url: 'https://api.openai.com/v1' }, 'gpt-4.1');
  for (const row of rows) {
    test(`${row.name} (${row.fixture})`, () => {
      const wire = buildChatRequest(row.request, endpoint, 'sk-1', row.stream ?? false);
      assert.equal(wire.body, JSON.stringify(readJsonFixture(here, row.fixture)));
    });
  }

  test('a thinking budget has no Chat equivalent: 400 on the reasoning control', () => {
    assert.throws(() => chatBody(request({ dialect: 'messages', reasoning: { kind: 'budget', budgetTokens: 2048 } }), 'm', false), rejectedField('reasoning'));
  });

  test('URL, bearer key and headers', () => {
    const endpoint = simulatorEndpoint({ kind: 'openai', base_url: 'http://127.0.0.1:9/v1/' }, 'up-model');
    const wire = buildChatRequest(request({}), endpoint, 'sk-1', true);
    assert.equal(wire.url, 'http://127.0.0.1:9/v1/chat/completions');
    assert.equal(wire.headers.authorization, 'Bearer sk-1');
    assert.equal(wire.headers.accept, 'text/event-stream');
    assert.equal(buildChatRequest(request({}), endpoint, undefined, false).headers.authorization, undefined);
  });

  test('anthropic-beta values of a messages client are not sent to an OpenAI upstream', () => {
    const endpoint = simulatorEndpoint({ kind: 'openai', base_url: 'http://127.0.0.1:9/v1/' }, 'up-model');
    const wire = buildChatRequest(request({ betas: ['files-api-2025-04-14'] }), endpoint, 'sk-1', false);
    assert.deepEqual(Object.keys(wire.headers).sort(), ['authorization', 'content-type']);
  });
});
