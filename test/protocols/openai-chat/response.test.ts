import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseChatError } from '../../../src/protocols/openai-chat/errors.ts';
import { parseChatResponse } from '../../../src/protocols/openai-chat/response.ts';
import { readFixture } from '../../simulators/fixtures.ts';
import { finish, responseFixtureTests, result, usage } from '../helpers.ts';
import { HELLO_THERE_LOGPROBS } from './logprobs-expected.ts';

const here = import.meta.dirname;
const GPT_41 = 'gpt-4.1-2025-04-14';

describe('openai chat: response fixtures → canonical result', () => {
  responseFixtureTests(here, parseChatResponse, {
    'text.json': result(['chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT', GPT_41], finish('stop', 'stop'), usage(19, 10), [
      { type: 'text', text: 'Hello! How can I assist you today?' },
    ]),
    'tools.json': result(['chatcmpl-tools1', GPT_41], finish('tool_calls', 'tool_calls'), usage(82, 40), [
      { type: 'tool_call', id: 'call_abc', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'tool_call', id: 'call_def', name: 'get_time', arguments: '{"zone":"CET"}' },
    ]),
    'reasoning.json': result(['chatcmpl-reason1', 'deepseek-reasoner'], finish('stop', 'stop'), usage(12, 30, { reasoningTokens: 22 }), [
      { type: 'reasoning', text: 'The user greets me; a short greeting back fits.' },
      { type: 'text', text: 'Hi! What can I do for you?' },
    ]),
    'length.json': result(['chatcmpl-len1', 'gpt-4o-mini-2024-07-18'], finish('length', 'length'), usage(14, 8), [
      { type: 'text', text: 'Once upon a time, in a' },
    ]),
    // docs/protocols.md, "Usage": uncached = prompt − cached − cache write; output includes
    // reasoning.
    'cached-usage.json': result(
      ['chatcmpl-cache1', 'gpt-5-2025-08-07'],
      finish('stop', 'stop'),
      usage(258, 300, { cacheReadTokens: 1920, cacheWriteTokens: 128, reasoningTokens: 256 }),
      [{ type: 'text', text: 'Done.' }],
    ),
    'logprobs.json': result(['chatcmpl-logp1', 'gpt-4o-mini-2024-07-18'], finish('stop', 'stop'), usage(11, 3), [{ type: 'text', text: 'Hello there!' }], {
      logprobs: HELLO_THERE_LOGPROBS,
    }),
  });

  test("logprobs: a missing bytes form is null; a refusal's tokens go with the refusal text; none asked for, none kept", () => {
    const choice = (logprobs: unknown) => parseChatResponse({ choices: [{ finish_reason: 'stop', message: { content: null, refusal: 'No.' }, logprobs }] });
    assert.deepEqual(choice({ content: null, refusal: [{ token: 'No.', logprob: -0.5, top_logprobs: [] }] }).logprobs, [
      { token: 'No.', logprob: -0.5, bytes: null, topLogprobs: [] },
    ]);
    assert.equal('logprobs' in choice(null), false);
  });

  test('extra_content on a tool call is kept for replay (chat rule 1)', () => {
    const body = {
      id: 'x',
      choices: [
        {
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' }, extra_content: { google: { thought_signature: 'sig==' } } }],
          },
        },
      ],
    };
    assert.deepEqual(parseChatResponse(body).content, [
      { type: 'tool_call', id: 'c1', name: 'f', arguments: '{}', extraContent: { google: { thought_signature: 'sig==' } } },
    ]);
  });

  test('url_citation annotations become citations', () => {
    const body = {
      choices: [
        {
          finish_reason: 'stop',
          message: {
            content: 'See it.',
            annotations: [{ type: 'url_citation', url_citation: { url: 'https://example.com', title: 'Ex', start_index: 0, end_index: 7 } }],
          },
        },
      ],
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
