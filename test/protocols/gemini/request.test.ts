import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CanonicalRequest } from '../../../src/canonical/index.ts';
import { buildGeminiRequest, geminiBody } from '../../../src/protocols/gemini/request.ts';
import { simulatorEndpoint } from '../../simulators/endpoint.ts';
import { canonicalRequest as request } from '../helpers.ts';

const user = { role: 'user', parts: [{ text: 'Hi' }] };
const weatherTool = { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
const declaration = { name: 'get_weather', description: 'Weather', parametersJsonSchema: weatherTool.parameters };

describe('gemini: canonical request → upstream body', () => {
  const rows: { name: string; request: CanonicalRequest; expected: object }[] = [
    { name: 'minimal', request: request({}), expected: { contents: [user] } },
    {
      name: 'system instruction; generation config only with what was given',
      request: request({
        system: [{ text: 'Be brief.' }, { text: 'Be kind.', cacheControl: { type: 'ephemeral' } }],
        maxOutputTokens: 50,
        temperature: 0.2,
        topP: 0.9,
        topK: 40,
        stop: ['END'],
        presencePenalty: 0.5,
        frequencyPenalty: -0.5,
        seed: 7,
      }),
      expected: {
        contents: [user],
        systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Be kind.' }] },
        generationConfig: { temperature: 0.2, topP: 0.9, topK: 40, maxOutputTokens: 50, stopSequences: ['END'], presencePenalty: 0.5, frequencyPenalty: -0.5, seed: 7 },
      },
    },
    {
      name: 'tools as function declarations with parametersJsonSchema; named choice → ANY + allowedFunctionNames',
      request: request({ tools: [weatherTool, { name: 'get_time' }], toolChoice: { kind: 'tool', name: 'get_weather' }, parallelToolCalls: true }),
      expected: {
        contents: [user],
        tools: [{ functionDeclarations: [declaration, { name: 'get_time' }] }],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
      },
    },
    {
      name: 'tool choice auto/none/required → AUTO/NONE/ANY',
      request: request({ tools: [weatherTool], toolChoice: { kind: 'none' } }),
      expected: { contents: [user], tools: [{ functionDeclarations: [declaration] }], toolConfig: { functionCallingConfig: { mode: 'NONE' } } },
    },
    {
      name: 'strict tools → VALIDATED when the model chooses',
      request: request({ tools: [{ ...weatherTool, strict: true }] }),
      expected: { contents: [user], tools: [{ functionDeclarations: [declaration] }], toolConfig: { functionCallingConfig: { mode: 'VALIDATED' } } },
    },
    {
      name: 'web search → the googleSearch tool beside the declarations',
      request: request({ webSearch: true, tools: [weatherTool], toolChoice: { kind: 'auto' } }),
      expected: { contents: [user], tools: [{ functionDeclarations: [declaration] }, { googleSearch: {} }], toolConfig: { functionCallingConfig: { mode: 'AUTO' } } },
    },
    {
      name: 'json_schema → responseMimeType + responseJsonSchema',
      request: request({ responseFormat: { kind: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } }),
      expected: { contents: [user], generationConfig: { responseMimeType: 'application/json', responseJsonSchema: { type: 'object' } } },
    },
    {
      name: 'json_object → responseMimeType alone',
      request: request({ responseFormat: { kind: 'json_object' } }),
      expected: { contents: [user], generationConfig: { responseMimeType: 'application/json' } },
    },
    {
      name: 'tool loop: signatures replayed on their functionCall part (canonical or extra_content form), other families dropped; synthesized ids left out',
      request: request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'thought summary', signature: { family: 'gemini', value: 'thought-sig' } },
              { type: 'reasoning', text: 'from elsewhere', signature: { family: 'anthropic', value: 'a' } },
              { type: 'tool_call', id: 'call_0_get_weather', name: 'get_weather', arguments: '{"city":"Paris"}', signature: { family: 'gemini', value: 'sig-1' } },
              { type: 'tool_call', id: 'call_1_get_weather', name: 'get_weather', arguments: '{"city":"Rome"}', extraContent: { google: { thought_signature: 'sig-2' } } },
              { type: 'tool_call', id: 'toolu_9', name: 'get_time', arguments: '{}', signature: { family: 'anthropic', value: 'not-for-google' } },
            ],
          },
          { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_0_get_weather', content: [{ type: 'text', text: '18C' }] }] },
          { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_1_get_weather', name: 'get_weather', content: [{ type: 'text', text: 'rain' }], isError: true }] },
          { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'toolu_9', content: [{ type: 'text', text: '12:00' }] }] },
          { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
        ],
      }),
      expected: {
        contents: [
          { role: 'user', parts: [{ text: 'Weather?' }] },
          {
            role: 'model',
            parts: [
              { text: 'thought summary', thought: true, thoughtSignature: 'thought-sig' },
              { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-1' },
              { functionCall: { name: 'get_weather', args: { city: 'Rome' } }, thoughtSignature: 'sig-2' },
              { functionCall: { name: 'get_time', args: {}, id: 'toolu_9' } },
            ],
          },
          {
            role: 'user',
            parts: [
              { functionResponse: { name: 'get_weather', response: { result: '18C' } } },
              { functionResponse: { name: 'get_weather', response: { error: 'rain' } } },
              { functionResponse: { name: 'get_time', response: { result: '12:00' }, id: 'toolu_9' } },
              { text: 'Thanks' },
            ],
          },
        ],
      },
    },
    {
      name: 'images inline and by URL (media type from the extension when it tells), documents',
      request: request({
        messages: [{
          role: 'user',
          content: [
            { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBO' } },
            { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.JPG?size=2' } },
            { type: 'image', source: { kind: 'url', url: 'https://example.com/image' } },
            { type: 'document', mediaType: 'application/pdf', data: 'JVBE' },
            { type: 'document', mediaType: 'text/plain', data: 'plain words' },
          ],
        }],
      }),
      expected: {
        contents: [{
          role: 'user',
          parts: [
            { inlineData: { mimeType: 'image/png', data: 'iVBO' } },
            { fileData: { fileUri: 'https://example.com/cat.JPG?size=2', mimeType: 'image/jpeg' } },
            { fileData: { fileUri: 'https://example.com/image' } },
            { inlineData: { mimeType: 'application/pdf', data: 'JVBE' } },
            { text: 'plain words' },
          ],
        }],
      },
    },
  ];
  for (const row of rows) {
    test(row.name, () => {
      assert.deepEqual(geminiBody(row.request), row.expected);
    });
  }

  test('reasoning → thinkingConfig (Google\'s effort budgets; none/disabled = 0; adaptive = dynamic)', () => {
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

  test('parallel_tool_calls=false cannot be expressed: 400 naming the client field', () => {
    assert.throws(() => geminiBody(request({ tools: [weatherTool], parallelToolCalls: false })), { status: 400, code: 'unsupported_parameter', param: 'parallel_tool_calls' });
    assert.throws(() => geminiBody(request({ dialect: 'messages', tools: [weatherTool], parallelToolCalls: false })), {
      param: 'tool_choice.disable_parallel_tool_use',
    });
  });

  test('a tool result whose function cannot be named is a 400; unparsable arguments are a 400, never {}', () => {
    assert.throws(() => geminiBody(request({ messages: [{ role: 'tool', content: [{ type: 'tool_result', toolCallId: 'x', content: [] }] }] })), {
      status: 400,
      param: 'messages',
    });
    assert.throws(
      () => geminiBody(request({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }, { role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: 'f', arguments: '{oops' }] }] })),
      { status: 400, code: 'invalid_value', param: 'messages' },
    );
  });

  test('URLs for both methods; x-goog-api-key; a models/ prefix is accepted', () => {
    const endpoint = simulatorEndpoint({ kind: 'gemini', base_url: 'http://upstream.test/' }, 'models/gemini-2.5-flash');
    const plain = buildGeminiRequest(request({}), endpoint, 'key-1', false);
    assert.equal(plain.url, 'http://upstream.test/v1beta/models/gemini-2.5-flash:generateContent');
    assert.deepEqual(plain.headers, { 'content-type': 'application/json', 'x-goog-api-key': 'key-1' });
    const streamed = buildGeminiRequest(request({}), endpoint, 'key-1', true);
    assert.equal(streamed.url, 'http://upstream.test/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    assert.equal(buildGeminiRequest(request({}), simulatorEndpoint({ kind: 'gemini' }, 'gemini-3-pro'), undefined, false).url,
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-3-pro:generateContent');
  });
});
