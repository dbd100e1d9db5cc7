import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CanonicalRequest } from '../../../src/canonical/index.ts';
import { openAIResponsesTranslator } from '../../../src/protocols/openai-responses/index.ts';
import type { RouteEndpoint } from '../../../src/catalog/types.ts';
import { buildResponsesRequest } from '../../../src/protocols/openai-responses/request.ts';
import { simulatorEndpoint } from '../../simulators/endpoint.ts';
import { readJsonFixture } from '../../simulators/fixtures.ts';
import { canonicalRequest as request } from '../helpers.ts';

const here = import.meta.dirname;

/** A route to `model`; `reasoning` is the catalog's reasoning capability of the route. */
function endpoint(model: string, reasoning?: boolean): RouteEndpoint {
  const base = simulatorEndpoint({ kind: 'openai-responses' }, model);
  return reasoning === undefined ? base : { ...base, capabilities: { reasoning } };
}

function body(canonical: CanonicalRequest, route: RouteEndpoint = endpoint('up-model')): Record<string, unknown> {
  return JSON.parse(buildResponsesRequest(canonical, route, 'sk-1', canonical.stream).body) as Record<string, unknown>;
}

/** The reasoning items that preceded a call, as its signature carries them (what a chat client replays in extra_content). */
const CARRIED_REASONING = {
  family: 'openai',
  value: JSON.stringify([
    {
      type: 'reasoning',
      id: 'rs_6820f383d7c08191846711c5df8233bc',
      summary: [{ type: 'summary_text', text: '**Finding the city**\n\nThe photo shows the Eiffel Tower.' }],
      encrypted_content: 'gAAAAABoIPOH6jx1RV2p',
    },
  ]),
} as const;

describe('openai responses: canonical request → upstream body (request-*.json fixtures)', () => {
  const rows: { fixture: string; name: string; request: CanonicalRequest; route: RouteEndpoint }[] = [
    {
      fixture: 'request-text.json',
      name: 'system blocks become instructions; length, sampling, user, stream',
      request: request(
        {
          system: [{ text: 'You are a calm storyteller.' }, { text: 'Keep it short.' }],
          maxOutputTokens: 256,
          temperature: 0.7,
          topP: 0.9,
          user: 'user-1234',
          stream: true,
        },
        'Tell me a three sentence bedtime story about a unicorn.',
      ),
      route: endpoint('gpt-4.1'),
    },
    {
      fixture: 'request-tools.json',
      name: 'flat function tools with explicit strict, web search, a named tool choice, no parallel calls',
      request: request(
        {
          tools: [
            {
              name: 'get_weather',
              description: 'Get current temperature for a given location.',
              parameters: {
                type: 'object',
                properties: { location: { type: 'string', description: 'City and country e.g. Bogotá, Colombia' } },
                required: ['location'],
                additionalProperties: false,
              },
              strict: true,
            },
            { name: 'get_time' },
          ],
          webSearch: true,
          toolChoice: { kind: 'tool', name: 'get_weather' },
          parallelToolCalls: false,
        },
        'What is the weather like in Paris today?',
      ),
      route: endpoint('gpt-4.1'),
    },
    {
      fixture: 'request-structured.json',
      name: 'json_schema flat in text.format; a reasoning effort asks for encrypted reasoning',
      request: request(
        {
          system: [{ text: 'Extract the event information.' }],
          toolChoice: { kind: 'required' },
          responseFormat: {
            kind: 'json_schema',
            name: 'calendar_event',
            strict: true,
            schema: {
              type: 'object',
              properties: { name: { type: 'string' }, date: { type: 'string' }, participants: { type: 'array', items: { type: 'string' } } },
              required: ['name', 'date', 'participants'],
              additionalProperties: false,
            },
          },
          reasoning: { kind: 'effort', effort: 'high' },
        },
        'Alice and Bob are going to a science fair on Friday.',
      ),
      route: endpoint('o4-mini'),
    },
    {
      fixture: 'request-tool-loop.json',
      name: 'chat tool loop: the reasoning item a call carries is rebuilt right before it; results become function_call_output items',
      request: request({
        reasoning: { kind: 'effort', effort: 'medium' },
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is the weather like where this photo was taken?' },
              {
                type: 'image',
                source: {
                  kind: 'url',
                  url: 'https://upload.wikimedia.org/wikipedia/commons/4/4b/La_Tour_Eiffel_vue_de_la_Tour_Saint-Jacques%2C_Paris_ao%C3%BBt_2014_%282%29.jpg',
                },
              },
            ],
          },
          {
            role: 'assistant',
            content: [
              // The reasoning text a chat client replays (reasoning_content) has no item to refer to.
              { type: 'reasoning', text: '**Finding the city**\n\nThe photo shows the Eiffel Tower.' },
              { type: 'text', text: 'That is the Eiffel Tower; checking Paris.' },
              {
                type: 'tool_call',
                id: 'call_12345xyz',
                name: 'get_weather',
                arguments: '{"location":"Paris, France"}',
                signature: CARRIED_REASONING,
                extraContent: { openai: { encrypted_content: CARRIED_REASONING.value } },
              },
              { type: 'tool_call', id: 'call_67890abc', name: 'get_time', arguments: '{}' },
            ],
          },
          {
            role: 'tool',
            content: [
              { type: 'tool_result', toolCallId: 'call_12345xyz', content: [{ type: 'text', text: '{"temperature":18,"sky":"sunny"}' }] },
              {
                type: 'tool_result',
                toolCallId: 'call_67890abc',
                content: [
                  { type: 'text', text: '14:05, see the clock:' },
                  { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' }, detail: 'low' },
                ],
              },
            ],
          },
        ],
      }),
      route: endpoint('o4-mini'),
    },
    {
      fixture: 'request-reasoning-replay.json',
      name: "OpenAI reasoning parts go back by reference in place; another family's reasoning is dropped",
      request: request({
        reasoning: { kind: 'effort', effort: 'low' },
        messages: [
          { role: 'user', content: [{ type: 'text', text: "How many r's are in strawberry?" }] },
          {
            role: 'assistant',
            content: [
              {
                type: 'reasoning',
                text: "**Counting the letters**\n\nThe word has three r's.",
                signature: { family: 'openai', value: '{"id":"rs_6820f383d7c08191846711c5df8233bc","encrypted_content":"gAAAAABoIPOH6jx1RV2p"}' },
              },
              { type: 'reasoning', text: 'An Anthropic thought', signature: { family: 'anthropic', value: 'sig' } },
              { type: 'text', text: "There are three r's in strawberry." },
            ],
          },
          { role: 'user', content: [{ type: 'text', text: 'And in raspberry?' }] },
        ],
      }),
      route: endpoint('o4-mini'),
    },
  ];
  for (const row of rows) {
    test(`${row.fixture}: ${row.name}`, () => {
      assert.deepEqual(body(row.request, row.route), readJsonFixture(here, row.fixture));
    });
  }
});

describe('openai responses: canonical request → upstream body', () => {
  test('minimal', () => {
    assert.deepEqual(body(request({})), { model: 'up-model', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }] });
  });

  test('json_object', () => {
    assert.deepEqual(body(request({ responseFormat: { kind: 'json_object' } })).text, { format: { type: 'json_object' } });
  });

  test('encrypted reasoning is asked for whenever the route may reason, never when reasoning is off', () => {
    const include = (reasoning: CanonicalRequest['reasoning'], capable?: boolean) => body(request({ reasoning }), endpoint('up-model', capable)).include;
    const asked = ['reasoning.encrypted_content'];
    assert.deepEqual(include({ kind: 'effort', effort: 'low' }), asked, 'an effort on a route of unknown capability');
    assert.deepEqual(include(undefined, true), asked, 'no effort on a reasoning route: it reasons by default');
    assert.equal(include(undefined, false), undefined);
    assert.equal(include(undefined), undefined);
    assert.equal(include({ kind: 'effort', effort: 'none' }, true), undefined);
    assert.equal(include({ kind: 'disabled' }, false), undefined);
  });

  test('a turn that replays its reasoning items does not get the ones its tool call carries as well', () => {
    const input = body(
      request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
          {
            role: 'assistant',
            content: [
              {
                type: 'reasoning',
                text: '',
                signature: { family: 'openai', value: '{"id":"rs_6820f383d7c08191846711c5df8233bc","encrypted_content":"gAAAAABoIPOH6jx1RV2p"}' },
              },
              { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{}', signature: CARRIED_REASONING },
            ],
          },
        ],
      }),
    ).input as { type: string }[];
    assert.deepEqual(
      input.map((item) => item.type),
      ['message', 'reasoning', 'function_call'],
    );
  });

  test('a tool call signature of another family, or an unreadable one, carries no reasoning', () => {
    for (const signature of [
      { family: 'anthropic', value: CARRIED_REASONING.value },
      { family: 'openai', value: '[{"type":"reasoning"}]' },
      { family: 'openai', value: 'not json' },
    ] as const) {
      const input = body(
        request({ messages: [{ role: 'assistant', content: [{ type: 'tool_call', id: 'call_1', name: 'f', arguments: '{}', signature }] }] }),
      ).input;
      assert.deepEqual(input, [{ type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' }]);
    }
  });

  test('chat rule 3: the parameters this route rejects are declared', () => {
    assert.deepEqual([...openAIResponsesTranslator.unsupportedParameters].sort(), [
      'frequencyPenalty',
      'logprobs',
      'outputEffort',
      'presencePenalty',
      'seed',
      'stop',
      'toolInputExamples',
      'topK',
      'topLogprobs',
    ]);
  });

  test('URL and bearer key', () => {
    const endpoint = simulatorEndpoint({ kind: 'openai-responses', base_url: 'http://127.0.0.1:9/v1' }, 'up-model');
    const wire = buildResponsesRequest(request({}), endpoint, 'sk-1', false);
    assert.equal(wire.url, 'http://127.0.0.1:9/v1/responses');
    assert.equal(wire.headers.authorization, 'Bearer sk-1');
  });
});
