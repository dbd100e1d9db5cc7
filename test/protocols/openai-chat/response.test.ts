import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseChatError } from '../../../src/protocols/openai-chat/errors.ts';
import { parseChatResponse } from '../../../src/protocols/openai-chat/response.ts';
import { readFixture, readJsonFixture } from '../../simulators/fixtures.ts';

const here = import.meta.dirname;

describe('openai chat: response fixtures → canonical result', () => {
  const rows = [
    {
      fixture: 'text.json',
      expected: {
        providerResponseId: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT',
        providerModel: 'gpt-4.1-2025-04-14',
        content: [{ type: 'text', text: 'Hello! How can I assist you today?' }],
        finish: { reason: 'stop', raw: 'stop' },
        usage: { inputTokens: 19, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 10, reasoningTokens: 0 },
      },
    },
    {
      fixture: 'tools.json',
      expected: {
        providerResponseId: 'chatcmpl-tools1',
        providerModel: 'gpt-4.1-2025-04-14',
        content: [
          { type: 'tool_call', id: 'call_abc', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'tool_call', id: 'call_def', name: 'get_time', arguments: '{"zone":"CET"}' },
        ],
        finish: { reason: 'tool_calls', raw: 'tool_calls' },
        usage: { inputTokens: 82, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 40, reasoningTokens: 0 },
      },
    },
    {
      fixture: 'reasoning.json',
      expected: {
        providerResponseId: 'chatcmpl-reason1',
        providerModel: 'deepseek-reasoner',
        content: [
          { type: 'reasoning', text: 'The user greets me; a short greeting back fits.' },
          { type: 'text', text: 'Hi! What can I do for you?' },
        ],
        finish: { reason: 'stop', raw: 'stop' },
        usage: { inputTokens: 12, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 30, reasoningTokens: 22 },
      },
    },
    {
      fixture: 'length.json',
      expected: {
        providerResponseId: 'chatcmpl-len1',
        providerModel: 'gpt-4o-mini-2024-07-18',
        content: [{ type: 'text', text: 'Once upon a time, in a' }],
        finish: { reason: 'length', raw: 'length' },
        usage: { inputTokens: 14, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 8, reasoningTokens: 0 },
      },
    },
    {
      // §9.7: uncached = prompt − cached − cache write; output includes reasoning.
      fixture: 'cached-usage.json',
      expected: {
        providerResponseId: 'chatcmpl-cache1',
        providerModel: 'gpt-5-2025-08-07',
        content: [{ type: 'text', text: 'Done.' }],
        finish: { reason: 'stop', raw: 'stop' },
        usage: { inputTokens: 258, cacheReadTokens: 1920, cacheWriteTokens: 128, outputTokens: 300, reasoningTokens: 256 },
      },
    },
  ];
  for (const row of rows) {
    test(row.fixture, () => {
      assert.deepEqual(parseChatResponse(readJsonFixture(here, row.fixture)), row.expected);
    });
  }

  test('extra_content on a tool call is kept for replay (chat rule 1)', () => {
    const body = {
      id: 'x',
      choices: [{
        finish_reason: 'tool_calls',
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' }, extra_content: { google: { thought_signature: 'sig==' } } }],
        },
      }],
    };
    assert.deepEqual(parseChatResponse(body).content, [
      { type: 'tool_call', id: 'c1', name: 'f', arguments: '{}', extraContent: { google: { thought_signature: 'sig==' } } },
    ]);
  });

  test('url_citation annotations become citations', () => {
    const body = {
      choices: [{
        finish_reason: 'stop',
        message: { content: 'See it.', annotations: [{ type: 'url_citation', url_citation: { url: 'https://example.com', title: 'Ex', start_index: 0, end_index: 7 } }] },
      }],
    };
    assert.deepEqual(parseChatResponse(body).citations, [{ url: 'https://example.com', title: 'Ex', startIndex: 0, endIndex: 7 }]);
  });

  test('a body without choices is a retryable upstream fault', () => {
    assert.throws(() => parseChatResponse({ object: 'chat.completion' }), { status: 502, code: 'upstream_error', retryable: true });
  });
});

describe('openai chat: error bodies → gateway errors', () => {
  test('429 keeps retry-after and is retryable', () => {
    const error = parseChatError(429, { 'retry-after': '20' }, readFixture(here, 'rate-limit.json'));
    assert.equal(error.status, 429);
    assert.equal(error.code, 'upstream_rate_limited');
    assert.equal(error.retryable, true);
    assert.equal(error.retryAfterSeconds, 20);
    assert.match(error.message, /Rate limit reached/);
  });

  test('400 passes the provider message and param, not retryable', () => {
    const body = JSON.stringify({ error: { message: "Invalid value for 'temperature'.", type: 'invalid_request_error', param: 'temperature', code: null } });
    const error = parseChatError(400, {}, body);
    assert.equal(error.status, 400);
    assert.equal(error.param, 'temperature');
    assert.equal(error.retryable, false);
  });

  test('401 hides the provider message (it may quote the key)', () => {
    const body = JSON.stringify({ error: { message: 'Incorrect API key provided: sk-abc***xyz.', type: 'invalid_request_error', code: 'invalid_api_key' } });
    const error = parseChatError(401, {}, body);
    assert.equal(error.status, 502);
    assert.doesNotMatch(error.message, /sk-abc/);
    assert.equal(error.retryable, false);
  });

  test('an array-wrapped error (Google compatible endpoint) and a non-JSON 502 page', () => {
    const wrapped = parseChatError(503, {}, JSON.stringify([{ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }]));
    assert.equal(wrapped.status, 503);
    assert.equal(wrapped.retryable, true);
    assert.match(wrapped.message, /overloaded/);
    const page = parseChatError(502, {}, '<html>Bad Gateway</html>');
    assert.equal(page.status, 502);
    assert.equal(page.retryable, true);
  });

  test('x-should-retry overrides the status rule', () => {
    assert.equal(parseChatError(500, { 'x-should-retry': 'false' }, '{}').retryable, false);
    assert.equal(parseChatError(400, { 'x-should-retry': 'true' }, '{}').retryable, true);
  });
});
