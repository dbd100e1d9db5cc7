/** The Messages body → canonical request mapping, its cross-field rules, and the names errors use. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { betasOf, decodeMessagesRequest } from '../../src/dialects/messages/decode.ts';
import type { CountTokensBody } from '../../src/dialects/messages/schema.ts';
import { assertRejected } from '../helpers/errors.ts';
import { makePdf, pdfBomb } from '../helpers/pdf.ts';
import { MAX_PDF_INFLATED_BYTES } from '../../src/tokens/pdf-size.ts';

const decode = (body: Partial<CountTokensBody>, betas?: string[]) =>
  decodeMessagesRequest({ model: 'gateway/m', max_tokens: 4096, messages: [{ role: 'user', content: 'hi' }], ...body }, betas);

const pdf = makePdf(1).toString('base64');
const tool = { name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } };

function rejects(body: Partial<CountTokensBody>, expected: { code: string; param: string; message?: RegExp }): void {
  assertRejected(() => decode(body), expected);
}

describe('decodeMessagesRequest', () => {
  test('the fields map one to one; omitted fields stay undefined', () => {
    const { request } = decode({ temperature: 0.5, top_p: 0.9, top_k: 40, stop_sequences: ['END'], metadata: { user_id: 'u-1' }, stream: true });
    assert.equal(request.dialect, 'messages');
    assert.equal(request.maxOutputTokens, 4096);
    assert.equal(request.temperature, 0.5);
    assert.equal(request.topP, 0.9);
    assert.equal(request.topK, 40);
    assert.deepEqual(request.stop, ['END']);
    assert.equal(request.user, 'u-1');
    assert.equal(request.stream, true);
    const bare = decode({}).request;
    for (const field of ['temperature', 'topP', 'topK', 'stop', 'user', 'tools', 'toolChoice', 'parallelToolCalls', 'reasoning', 'betas'] as const) {
      assert.equal(bare[field], undefined, field);
    }
    assert.equal(bare.stream, false);
    assert.equal(decode({ metadata: { user_id: null } }).request.user, undefined);
  });

  test('system as a string or as text blocks with cache_control in place; an empty string is no system prompt', () => {
    assert.deepEqual(decode({ system: 'be brief' }).request.system, [{ text: 'be brief' }]);
    assert.deepEqual(decode({ system: '' }).request.system, []);
    const { request } = decode({
      system: [
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two', cache_control: { type: 'ephemeral', ttl: '1h' } },
        { type: 'text', text: 'three', cache_control: null },
      ],
    });
    assert.deepEqual(request.system, [{ text: 'one' }, { text: 'two', cacheControl: { type: 'ephemeral', ttl: '1h' } }, { text: 'three' }]);
  });

  test('every block kind decodes in order, each cache_control on its own part (rule 1)', () => {
    const ephemeral = { type: 'ephemeral' as const };
    const { request } = decode({
      tools: [tool],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look', cache_control: ephemeral },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' }, cache_control: { type: 'ephemeral', ttl: '5m' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf }, title: 'spec' },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' }, title: null, cache_control: ephemeral },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'let me see', signature: 'sig-1' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'text', text: 'calling', citations: null },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' }, caller: { type: 'direct' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C', cache_control: ephemeral },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              is_error: true,
              content: [
                { type: 'text', text: 'no' },
                { type: 'image', source: { type: 'url', url: 'http://x/y.png' } },
              ],
            },
            { type: 'tool_result', tool_use_id: 'toolu_unknown' },
          ],
        },
      ],
    });
    assert.deepEqual(request.messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look', cacheControl: { type: 'ephemeral' } },
          { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } },
          { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' }, cacheControl: { type: 'ephemeral', ttl: '5m' } },
          { type: 'document', mediaType: 'application/pdf', data: pdf, title: 'spec' },
          { type: 'document', mediaType: 'text/plain', data: 'plain words', cacheControl: { type: 'ephemeral' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'let me see', signature: { family: 'anthropic', value: 'sig-1' } },
          { type: 'reasoning', text: '', redacted: true, signature: { family: 'anthropic', value: 'opaque' } },
          { type: 'text', text: 'calling' },
          { type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', toolCallId: 'toolu_1', name: 'get_weather', content: [{ type: 'text', text: '18C' }], cacheControl: { type: 'ephemeral' } },
          {
            type: 'tool_result',
            toolCallId: 'toolu_1',
            name: 'get_weather',
            content: [
              { type: 'text', text: 'no' },
              { type: 'image', source: { kind: 'url', url: 'http://x/y.png' } },
            ],
            isError: true,
          },
          { type: 'tool_result', toolCallId: 'toolu_unknown', content: [] },
        ],
      },
    ]);
  });

  test('string content is one text part; an unsigned thinking block replays without a signature', () => {
    const { request } = decode({
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: '' }] },
        { role: 'assistant', content: 'a' },
      ],
    });
    assert.deepEqual(request.messages[0].content, [{ type: 'text', text: 'q' }]);
    assert.deepEqual(request.messages[1].content, [{ type: 'reasoning', text: 'hm' }]);
    assert.deepEqual(request.messages[2].content, [{ type: 'text', text: 'a' }]);
  });

  test('tools: function tools with strict and cache_control; a server tool is refused with its reason (rule 5)', () => {
    const { request } = decode({ tools: [{ ...tool, description: 'd', strict: true, type: 'custom', cache_control: { type: 'ephemeral', ttl: '1h' } }] });
    assert.deepEqual(request.tools, [
      { name: 'get_weather', description: 'd', parameters: tool.input_schema, strict: true, cacheControl: { type: 'ephemeral', ttl: '1h' } },
    ]);
    rejects(
      { tools: [tool, { type: 'web_search_20250305', name: 'web_search' }] },
      { code: 'unsupported_parameter', param: 'tools[1]', message: /Web search is not available/ },
    );
    rejects({ tools: [{ type: 'bash_20250124', name: 'bash' }] }, { code: 'unsupported_parameter', param: 'tools[0]', message: /'bash_20250124'/ });
  });

  test('tool_choice maps to canonical choices; disable_parallel_tool_use sets parallel calls explicitly', () => {
    assert.deepEqual(decode({ tools: [tool], tool_choice: { type: 'any' } }).request.toolChoice, { kind: 'required' });
    assert.deepEqual(decode({ tools: [tool], tool_choice: { type: 'tool', name: 'get_weather' } }).request.toolChoice, { kind: 'tool', name: 'get_weather' });
    assert.deepEqual(decode({ tools: [tool], tool_choice: { type: 'none' } }).request.toolChoice, { kind: 'none' });
    const auto = decode({ tools: [tool], tool_choice: { type: 'auto', disable_parallel_tool_use: true } }).request;
    assert.deepEqual([auto.toolChoice, auto.parallelToolCalls], [{ kind: 'auto' }, false]);
    assert.equal(decode({ tools: [tool], tool_choice: { type: 'auto', disable_parallel_tool_use: false } }).request.parallelToolCalls, true);
    assert.equal(decode({ tools: [tool], tool_choice: { type: 'auto' } }).request.parallelToolCalls, undefined);
    // auto and none without tools change nothing.
    assert.equal(decode({ tool_choice: { type: 'auto' } }).request.toolChoice, undefined);
    rejects({ tool_choice: { type: 'any' } }, { code: 'invalid_value', param: 'tool_choice' });
    rejects({ tools: [tool], tool_choice: { type: 'tool', name: 'other' } }, { code: 'invalid_value', param: 'tool_choice.name' });
  });

  test('thinking (rule 2): each mode as itself; a budget at or over max_tokens is a 400, never resized', () => {
    assert.deepEqual(decode({ thinking: { type: 'enabled', budget_tokens: 1024 } }).request.reasoning, { kind: 'budget', budgetTokens: 1024 });
    assert.deepEqual(decode({ thinking: { type: 'adaptive' } }).request.reasoning, { kind: 'adaptive' });
    assert.deepEqual(decode({ thinking: { type: 'disabled' } }).request.reasoning, { kind: 'disabled' });
    rejects({ max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 2048 } }, { code: 'invalid_value', param: 'thinking.budget_tokens' });
    assert.deepEqual(decode({ max_tokens: 2049, thinking: { type: 'enabled', budget_tokens: 2048 } }).request.reasoning, {
      kind: 'budget',
      budgetTokens: 2048,
    });
    // count_tokens has no max_tokens to compare with.
    assert.deepEqual(decode({ max_tokens: undefined, thinking: { type: 'enabled', budget_tokens: 5000 } }).request.reasoning, {
      kind: 'budget',
      budgetTokens: 5000,
    });
  });

  test('gateway options, fallbacks and betas', () => {
    const { request } = decode(
      {
        models: ['gateway/m', 'gateway/b', 'gateway/b'],
        provider: { sort: 'price' },
        gateway: { cache: 'on', cache_ttl: '1h', provider: { allow_fallbacks: false } },
      },
      ['a-2025', 'b-2025'],
    );
    assert.deepEqual(request.fallbackModels, ['gateway/b']);
    assert.deepEqual(request.provider, { sort: 'price', allowFallbacks: false });
    assert.deepEqual(request.cache, { mode: 'on', ttl: '1h' });
    assert.deepEqual(request.betas, ['a-2025', 'b-2025']);
    assert.deepEqual(betasOf('a, b,,c'), ['a', 'b', 'c']);
    assert.deepEqual(betasOf(['a', 'b']), ['a', 'b']);
    assert.equal(betasOf(' , '), undefined);
    assert.equal(betasOf(undefined), undefined);
  });

  test('a PDF the gateway cannot measure is a 400 naming its field: no PDF, a compressed bomb', () => {
    const withDocument = (data: string) => ({
      messages: [
        { role: 'user' as const, content: 'hi' },
        { role: 'assistant' as const, content: 'yes' },
        {
          role: 'user' as const,
          content: [
            { type: 'text' as const, text: 'read' },
            { type: 'document' as const, source: { type: 'base64' as const, media_type: 'application/pdf' as const, data } },
          ],
        },
      ],
    });
    const param = 'messages[2].content[1].source.data';
    assertRejected(() => decode(withDocument('JVBERi0=')), { code: 'invalid_value', param, message: /no page/ });
    assertRejected(() => decode(withDocument(pdfBomb(MAX_PDF_INFLATED_BYTES + 1).toString('base64'))), {
      code: 'invalid_value',
      param,
      message: /inflate to more than/,
    });
  });

  test('canonical references are named in Messages terms', () => {
    const { names } = decode({});
    const field = (name: Parameters<typeof names.name>[0] & { kind: 'field' }) => names.name(name);
    assert.equal(field({ kind: 'field', field: 'reasoning' }), 'thinking');
    assert.equal(field({ kind: 'field', field: 'maxOutputTokens' }), 'max_tokens');
    assert.equal(field({ kind: 'field', field: 'stop' }), 'stop_sequences');
    assert.equal(field({ kind: 'field', field: 'topK' }), 'top_k');
    assert.equal(field({ kind: 'field', field: 'parallelToolCalls' }), 'tool_choice.disable_parallel_tool_use');
    assert.equal(field({ kind: 'field', field: 'user' }), 'metadata.user_id');
    assert.equal(field({ kind: 'field', field: 'toolChoice' }), 'tool_choice');
    assert.equal(names.name({ kind: 'tool-strict', toolIndex: 2 }), 'tools[2].strict');
    assert.equal(names.name({ kind: 'image', messageIndex: 1, partIndex: 0 }), 'messages[1].content[0]');
    assert.equal(names.name({ kind: 'image', messageIndex: 2, partIndex: 1, innerIndex: 1 }), 'messages[2].content[1].content[1]');
  });
});
