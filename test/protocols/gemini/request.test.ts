import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CanonicalRequest } from '../../../src/canonical/index.ts';
import { buildGeminiRequest, geminiBody } from '../../../src/protocols/gemini/request.ts';
import { simulatorEndpoint } from '../../simulators/endpoint.ts';
import { readJsonFixture } from '../../simulators/fixtures.ts';
import { canonicalRequest as request, rejectedField } from '../helpers.ts';

const here = import.meta.dirname;
const weatherTool = {
  name: 'get_weather',
  description: 'Current weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const timeTool = { name: 'get_time', description: 'Current time in a time zone', parameters: { type: 'object', properties: { zone: { type: 'string' } } } };
/** The signature Gemini put on the first call of tools.json, replayed by the tool loop below. */
const SIGNATURE =
  'CiQB0e2Kb2vEwyoTgBG3ZHxb0s7uGOuOXUTwiJEd+1sGfAY4Rl0KYQHR7YpvWpPSxEtAzu0ijX6hVzzaxvTk1TWPtjwwc4pfKSCKvx6kIr1zx3GVjkKiGFJ4yzAoqEU/2fI1sGTX2AFkEl9J5tk';

describe('gemini: canonical request → upstream body (request fixtures)', () => {
  const endpoint = simulatorEndpoint({ kind: 'gemini' }, 'gemini-2.5-flash');
  const rows: { fixture: string; name: string; request: CanonicalRequest }[] = [
    {
      fixture: 'request-text.json',
      name: 'system instruction (cache marks dropped); generation config only with what was given',
      request: request(
        {
          system: [{ text: 'You are a concise assistant.' }, { text: 'Answer in English.', cacheControl: { type: 'ephemeral' } }],
          maxOutputTokens: 50,
          temperature: 0.2,
          topP: 0.9,
          topK: 40,
          stop: ['END'],
          presencePenalty: 0.5,
          frequencyPenalty: -0.5,
          seed: 7,
        },
        'Write a haiku about autumn.',
      ),
    },
    {
      fixture: 'request-tools.json',
      name: 'tools as function declarations with parametersJsonSchema; named choice → ANY + allowedFunctionNames',
      request: request(
        { tools: [weatherTool, { name: 'get_time' }], toolChoice: { kind: 'tool', name: 'get_weather' }, parallelToolCalls: true },
        'Weather in Paris?',
      ),
    },
    {
      fixture: 'request-web-search.json',
      name: 'web search → the googleSearch tool beside the declarations',
      request: request({ webSearch: true, tools: [weatherTool], toolChoice: { kind: 'auto' } }, 'Who won Euro 2024, and what is the weather in Berlin?'),
    },
    {
      fixture: 'request-json-schema.json',
      name: 'json_schema → responseMimeType + responseJsonSchema',
      request: request(
        {
          responseFormat: {
            kind: 'json_schema',
            name: 'city',
            schema: {
              type: 'object',
              properties: { name: { type: 'string' }, population: { type: 'integer' } },
              required: ['name', 'population'],
              additionalProperties: false,
            },
            strict: true,
          },
        },
        'Name the largest city in Japan.',
      ),
    },
    {
      fixture: 'request-tool-loop.json',
      name: 'tool loop: signatures replayed on their functionCall part (canonical or extra_content form), other families dropped; synthesized ids left out, real ids kept',
      request: request({
        tools: [weatherTool, timeTool],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris and in Rome, and what time is it?' }] },
          {
            role: 'assistant',
            content: [
              {
                type: 'reasoning',
                text: '**Gathering data**\n\nTwo cities, then the time.',
                signature: { family: 'gemini', value: 'EvYBCvMBAdHtim9KxyBCyqj3ZCqn0Na6Yb5yTUmd0Nt4U5k' },
              },
              { type: 'reasoning', text: 'Reasoning from another provider.', signature: { family: 'anthropic', value: 'EqQBCkYIARgCKkA' } },
              {
                type: 'tool_call',
                id: 'call_0_get_weather',
                name: 'get_weather',
                arguments: '{"city":"Paris"}',
                signature: { family: 'gemini', value: SIGNATURE },
              },
              {
                type: 'tool_call',
                id: 'call_1_get_weather',
                name: 'get_weather',
                arguments: '{"city":"Rome"}',
                extraContent: { google: { thought_signature: 'CiQB0e2Kb4LqRome' } },
              },
              {
                type: 'tool_call',
                id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
                name: 'get_time',
                arguments: '{"zone":"CET"}',
                signature: { family: 'anthropic', value: 'not-for-google' },
              },
            ],
          },
          { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_0_get_weather', content: [{ type: 'text', text: '18C and sunny' }] }] },
          {
            role: 'tool',
            content: [
              {
                type: 'tool_result',
                toolCallId: 'call_1_get_weather',
                name: 'get_weather',
                content: [{ type: 'text', text: 'weather service unavailable' }],
                isError: true,
              },
            ],
          },
          { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', content: [{ type: 'text', text: '14:05' }] }] },
          { role: 'user', content: [{ type: 'text', text: 'Thanks! Try Rome again later.' }] },
        ],
      }),
    },
    {
      fixture: 'request-images.json',
      name: 'images inline and by URL (media type from the extension when it tells), documents',
      request: request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Compare these pictures with the report.' },
              {
                type: 'image',
                source: {
                  kind: 'base64',
                  mediaType: 'image/png',
                  data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
                },
              },
              { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.JPG?size=2' } },
              { type: 'image', source: { kind: 'url', url: 'https://example.com/image' } },
              { type: 'document', mediaType: 'application/pdf', data: 'JVBERi0xLjQKJcOkw7zDtsOfCg==' },
              { type: 'document', mediaType: 'text/plain', data: 'Quarterly report: revenue up 4%.' },
            ],
          },
        ],
      }),
    },
  ];
  for (const row of rows) {
    test(`${row.fixture}: ${row.name}`, () => {
      const wire = buildGeminiRequest(row.request, endpoint, 'AIzaSy-test-key', false);
      assert.deepEqual(JSON.parse(wire.body), readJsonFixture(here, row.fixture));
    });
  }

  test('the minimal body is the contents alone', () => {
    assert.deepEqual(geminiBody(request({})), { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] });
  });

  test('tool choice none → NONE; strict tools → VALIDATED when the model chooses; json_object → responseMimeType alone', () => {
    assert.deepEqual(geminiBody(request({ tools: [weatherTool], toolChoice: { kind: 'none' } })).toolConfig, { functionCallingConfig: { mode: 'NONE' } });
    assert.deepEqual(geminiBody(request({ tools: [{ ...weatherTool, strict: true }] })).toolConfig, { functionCallingConfig: { mode: 'VALIDATED' } });
    assert.deepEqual(geminiBody(request({ responseFormat: { kind: 'json_object' } })).generationConfig, { responseMimeType: 'application/json' });
  });

  test("reasoning → thinkingConfig (Google's effort budgets; none/disabled = 0; adaptive = dynamic)", () => {
    const config = (reasoning: CanonicalRequest['reasoning']) => geminiBody(request({ reasoning })).generationConfig?.thinkingConfig;
    assert.deepEqual(config({ kind: 'effort', effort: 'none' }), { thinkingBudget: 0 });
    assert.deepEqual(config({ kind: 'effort', effort: 'low' }), { thinkingBudget: 1024, includeThoughts: true });
    assert.deepEqual(config({ kind: 'effort', effort: 'medium' }), { thinkingBudget: 8192, includeThoughts: true });
    assert.deepEqual(config({ kind: 'effort', effort: 'high' }), { thinkingBudget: 24576, includeThoughts: true });
    assert.deepEqual(config({ kind: 'budget', budgetTokens: 2000 }), { thinkingBudget: 2000, includeThoughts: true });
    assert.deepEqual(config({ kind: 'adaptive' }), { thinkingBudget: -1, includeThoughts: true });
    assert.deepEqual(config({ kind: 'disabled' }), { thinkingBudget: 0 });
    assert.equal(config(undefined), undefined);
  });

  test('parallel_tool_calls=false cannot be expressed: 400 on the parallel tool calls control', () => {
    assert.throws(() => geminiBody(request({ tools: [weatherTool], parallelToolCalls: false })), rejectedField('parallelToolCalls'));
  });

  test('a tool result whose function cannot be named is a 400; unparsable arguments are a 400, never {}', () => {
    assert.throws(
      () => geminiBody(request({ messages: [{ role: 'tool', content: [{ type: 'tool_result', toolCallId: 'x', content: [] }] }] })),
      rejectedField('messages', 'invalid_value'),
    );
    assert.throws(
      () =>
        geminiBody(
          request({
            messages: [
              { role: 'user', content: [{ type: 'text', text: 'x' }] },
              { role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: 'f', arguments: '{oops' }] },
            ],
          }),
        ),
      rejectedField('messages', 'invalid_value'),
    );
  });

  test('URLs for both methods; x-goog-api-key; a models/ prefix is accepted', () => {
    const endpoint = simulatorEndpoint({ kind: 'gemini', base_url: 'http://upstream.test/' }, 'models/gemini-2.5-flash');
    const plain = buildGeminiRequest(request({}), endpoint, 'key-1', false);
    assert.equal(plain.url, 'http://upstream.test/v1beta/models/gemini-2.5-flash:generateContent');
    assert.deepEqual(plain.headers, { 'content-type': 'application/json', 'x-goog-api-key': 'key-1' });
    const streamed = buildGeminiRequest(request({}), endpoint, 'key-1', true);
    assert.equal(streamed.url, 'http://upstream.test/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    assert.equal(
      buildGeminiRequest(request({}), simulatorEndpoint({ kind: 'gemini' }, 'gemini-3-pro'), undefined, false).url,
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-3-pro:generateContent',
    );
  });
});
