/** The chat body → canonical request mapping, and the names errors use for canonical fields. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GatewayError } from '../../src/core/errors.ts';
import { decodeChatRequest } from '../../src/dialects/chat/decode.ts';
import type { ChatCompletionBody } from '../../src/dialects/chat/schema.ts';
import { assertRejected } from '../helpers/errors.ts';
import { makePdf } from '../helpers/pdf.ts';

const decode = (body: Partial<ChatCompletionBody>) => decodeChatRequest({ model: 'gateway/m', messages: [{ role: 'user', content: 'hi' }], ...body });

describe('decodeChatRequest', () => {
  test('system and developer messages are hoisted in order; message origins keep the wire indexes', () => {
    const { request, names } = decode({
      messages: [
        { role: 'system', content: 'one' },
        { role: 'user', content: 'q' },
        {
          role: 'developer',
          content: [
            { type: 'text', text: 'two' },
            { type: 'text', text: 'three' },
          ],
        },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } }] },
      ],
    });
    assert.deepEqual(request.system, [{ text: 'one' }, { text: 'two' }, { text: 'three' }]);
    assert.equal(request.messages.length, 2);
    assert.deepEqual(request.messages[1].content[0], { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' }, detail: 'low' });
    assert.equal(names.name({ kind: 'image', messageIndex: 1, partIndex: 0 }), 'messages[3].content[0]');
  });

  test('assistant tool calls keep extra_content verbatim; a thought signature is also lifted; tool results learn the name', () => {
    const extra = { google: { thought_signature: 'c2ln' }, vendor: { nested: [1, 2] } };
    const { request } = decode({
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: extra }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18C' },
      ],
    });
    const assistant = request.messages[1];
    assert.equal(assistant.role, 'assistant');
    assert.deepEqual(assistant.content, [
      {
        type: 'tool_call',
        id: 'call_1',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
        signature: { family: 'gemini', value: 'c2ln' },
        extraContent: extra,
      },
    ]);
    assert.equal(assistant.content[0].type === 'tool_call' && assistant.content[0].extraContent, extra);
    assert.deepEqual(request.messages[2], {
      role: 'tool',
      content: [{ type: 'tool_result', toolCallId: 'call_1', name: 'get_weather', content: [{ type: 'text', text: '18C' }] }],
    });
  });

  test('assistant reasoning_content and refusal come back as reasoning and text', () => {
    const { request } = decode({
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: null, refusal: 'I cannot.', reasoning_content: 'thinking' },
        { role: 'user', content: 'q2' },
      ],
    });
    assert.deepEqual(request.messages[1].content, [
      { type: 'reasoning', text: 'thinking' },
      { type: 'text', text: 'I cannot.' },
    ]);
  });

  test('max_tokens wins over max_completion_tokens, and errors name the field that was sent', () => {
    const both = decode({ max_tokens: 5, max_completion_tokens: 9 });
    assert.equal(both.request.maxOutputTokens, 5);
    assert.equal(both.names.name({ kind: 'field', field: 'maxOutputTokens' }), 'max_tokens');
    const alias = decode({ max_completion_tokens: 9 });
    assert.equal(alias.request.maxOutputTokens, 9);
    assert.equal(alias.names.name({ kind: 'field', field: 'maxOutputTokens' }), 'max_completion_tokens');
  });

  test('omission stays omission; explicit false and none are kept', () => {
    const omitted = decode({}).request;
    for (const field of [
      'temperature',
      'topP',
      'stop',
      'seed',
      'logprobs',
      'parallelToolCalls',
      'reasoning',
      'responseFormat',
      'toolChoice',
      'tools',
      'webSearch',
      'cache',
      'provider',
      'extraBody',
      'user',
    ] as const) {
      assert.equal(omitted[field], undefined, field);
    }
    assert.equal(omitted.stream, false);
    const explicit = decode({ logprobs: false, parallel_tool_calls: false, reasoning_effort: 'none', stop: 'END' }).request;
    assert.equal(explicit.logprobs, false);
    assert.equal(explicit.parallelToolCalls, false);
    assert.deepEqual(explicit.reasoning, { kind: 'effort', effort: 'none' });
    assert.deepEqual(explicit.stop, ['END']);
  });

  test('tools: function tools in order, web_search apart; names point at the wire index', () => {
    const { request, names } = decode({
      tools: [
        { type: 'function', function: { name: 'a', strict: null } },
        { type: 'web_search' },
        { type: 'function', function: { name: 'b', description: 'B', parameters: { type: 'object' }, strict: true } },
      ],
      tool_choice: { type: 'function', function: { name: 'b' } },
    });
    assert.deepEqual(request.tools, [{ name: 'a' }, { name: 'b', description: 'B', parameters: { type: 'object' }, strict: true }]);
    assert.equal(request.webSearch, true);
    assert.deepEqual(request.toolChoice, { kind: 'tool', name: 'b' });
    assert.equal(names.name({ kind: 'tool-strict', toolIndex: 1 }), 'tools[2].function.strict');
    assert.equal(names.name({ kind: 'field', field: 'webSearch' }), 'tools[1]');
  });

  test('tool_choice none or auto without function tools is not forwarded', () => {
    assert.equal(decode({ tool_choice: 'none' }).request.toolChoice, undefined);
    assert.equal(decode({ tool_choice: 'auto', tools: [{ type: 'web_search' }] }).request.toolChoice, undefined);
  });

  test('gateway options: cache and provider preferences (top-level provider wins per field); models deduplicated', () => {
    const { request } = decode({
      gateway: { cache: 'on', cache_ttl: '1h', provider: { sort: 'latency', allow_fallbacks: false } },
      provider: { sort: 'throughput', only: ['ignored'] },
      models: ['gateway/m', 'gateway/b', 'gateway/b', 'gateway/c'],
    });
    assert.deepEqual(request.cache, { mode: 'on', ttl: '1h' });
    assert.deepEqual(request.provider, { sort: 'throughput', allowFallbacks: false });
    assert.deepEqual(request.fallbackModels, ['gateway/b', 'gateway/c']);
  });

  test('file parts become documents; text/plain is decoded', () => {
    const { request } = decode({
      messages: [
        {
          role: 'user',
          content: [{ type: 'file', file: { file_data: `data:text/plain;base64,${Buffer.from('notes').toString('base64')}`, filename: 'n.txt' } }],
        },
      ],
    });
    assert.deepEqual(request.messages[0].content[0], { type: 'document', mediaType: 'text/plain', data: 'notes', title: 'n.txt' });
  });

  test('a file part that is no PDF the gateway can measure is a 400 naming its field', () => {
    const file = (bytes: Buffer) => ({
      messages: [
        { role: 'user' as const, content: [{ type: 'file' as const, file: { file_data: `data:application/pdf;base64,${bytes.toString('base64')}` } }] },
      ],
    });
    const { request } = decode(file(makePdf(2)));
    assert.equal(request.messages[0].content[0].type, 'document');
    assertRejected(() => decode(file(Buffer.from('not a pdf'))), {
      code: 'invalid_value',
      param: 'messages[0].content[0].file.file_data',
      message: /not a PDF/,
    });
  });

  test('cross-field rules are 400s naming the field', () => {
    const param = (body: Partial<ChatCompletionBody>) => {
      try {
        decode(body);
        return undefined;
      } catch (error) {
        assert.ok(error instanceof GatewayError && error.status === 400);
        return error.param;
      }
    };
    assert.equal(param({ stream_options: { include_usage: true } }), 'stream_options');
    assert.equal(param({ top_logprobs: 1, logprobs: false }), 'top_logprobs');
    assert.equal(
      param({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: 'plain text' } }] }] }),
      'messages[0].content[0].file.file_data',
    );
    assert.equal(
      param({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:text/plain;base64,AAAA' } }] }] }),
      'messages[0].content[0].image_url.url',
    );
  });
});
