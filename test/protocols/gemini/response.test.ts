import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseGeminiError } from '../../../src/protocols/gemini/errors.ts';
import { parseGeminiResponse } from '../../../src/protocols/gemini/response.ts';
import { readFixture } from '../../simulators/fixtures.ts';
import { finish, responseFixtureTests, result, usage } from '../helpers.ts';
import { GROUNDING_CITATIONS, GROUNDING_SEARCH } from './grounding-expected.ts';

const here = import.meta.dirname;
const FLASH = 'gemini-2.5-flash';
const THOUGHT_SUMMARY = '**Analyzing the question**\n\nThe user asks for 27 times 453. Breaking it into 400 + 50 + 3.';
const SIGNATURE =
  'CiQB0e2Kb2vEwyoTgBG3ZHxb0s7uGOuOXUTwiJEd+1sGfAY4Rl0KYQHR7YpvWpPSxEtAzu0ijX6hVzzaxvTk1TWPtjwwc4pfKSCKvx6kIr1zx3GVjkKiGFJ4yzAoqEU/2fI1sGTX2AFkEl9J5tk';

describe('gemini: response fixtures → canonical result', () => {
  responseFixtureTests(here, parseGeminiResponse, {
    'text.json': result(['mfXJaL6pJ5ymz7IP6cTsoAQ', FLASH], finish('stop', 'STOP'), usage(8, 9), [{ type: 'text', text: 'Hello! How can I help you today?' }]),
    // A turn with function calls reports STOP; the calls decide.
    'tools.json': result(['ZfbJaNzEDoSVz7IPq6KpuQY', 'gemini-3-pro-preview'], finish('tool_calls', 'STOP'), usage(74, 114, { reasoningTokens: 84 }), [
      { type: 'tool_call', id: 'call_0_get_weather', name: 'get_weather', arguments: '{"city":"Paris"}', signature: { family: 'gemini', value: SIGNATURE } },
      { type: 'tool_call', id: 'call_1_get_time', name: 'get_time', arguments: '{"zone":"CET"}' },
    ]),
    'thinking.json': result(['thinking-1', 'gemini-2.5-pro'], finish('stop', 'STOP'), usage(12, 239, { reasoningTokens: 228 }), [
      { type: 'reasoning', text: THOUGHT_SUMMARY, signature: { family: 'gemini', value: 'EvYBCvMBAdHtim9KxyBCyqj3ZCqn0Na6Yb5yTUmd0Nt4U5k' } },
      { type: 'text', text: '27 × 453 = 12,231.' },
    ]),
    'length.json': result(['len-1', 'gemini-2.5-flash-lite'], finish('length', 'MAX_TOKENS'), usage(6, 4), [{ type: 'text', text: 'Once upon a time' }]),
    // promptTokenCount includes the cached part.
    'cached-usage.json': result(['cache-1', FLASH], finish('stop', 'STOP'), usage(102, 6, { cacheReadTokens: 2048 }), [
      { type: 'text', text: 'The report covers Q3.' },
    ]),
    // Search results fed back to the model are input.
    'grounding.json': result(
      ['ground-1', FLASH],
      finish('stop', 'STOP'),
      usage(319, 18),
      [{ type: 'text', text: 'España ganó la Eurocopa 2024. Derrotó a Inglaterra 2-1.' }],
      {
        webSearch: GROUNDING_SEARCH,
        citations: GROUNDING_CITATIONS,
      },
    ),
    'blocked.json': result(['blocked-1', FLASH], finish('content_filter', 'PROHIBITED_CONTENT'), usage(7, 0), []),
    'safety.json': result(['safety-1', FLASH], finish('content_filter', 'SAFETY'), usage(11, 0), []),
  });

  test('function ids Gemini sends are kept; a malformed call is an error finish', () => {
    const result = parseGeminiResponse({
      candidates: [{ content: { parts: [{ functionCall: { id: 'fc-1', name: 'f', args: {} } }] }, finishReason: 'MALFORMED_FUNCTION_CALL' }],
    });
    assert.deepEqual(result.content, [{ type: 'tool_call', id: 'fc-1', name: 'f', arguments: '{}' }]);
    assert.deepEqual(result.finish, { reason: 'error', raw: 'MALFORMED_FUNCTION_CALL' });
  });

  test('a body without a finish is a retryable upstream fault', () => {
    assert.throws(() => parseGeminiResponse({ candidates: [] }), { status: 502, code: 'upstream_error', retryable: true });
  });
});

describe('gemini: upstream errors (docs/protocols.md, Upstream errors)', () => {
  test('429 RESOURCE_EXHAUSTED → retryable, waiting as RetryInfo says', () => {
    const error = parseGeminiError(429, {}, readFixture(here, 'rate-limit.json'));
    assert.deepEqual([error.status, error.code, error.retryable, error.retryAfterSeconds], [429, 'upstream_rate_limited', true, 36]);
  });

  test('a retry-after header wins over RetryInfo', () => {
    assert.equal(parseGeminiError(429, { 'retry-after': '3' }, readFixture(here, 'rate-limit.json')).retryAfterSeconds, 3);
  });

  test("400 INVALID_ARGUMENT (a missing thought signature) → the client's 400 with the message", () => {
    const error = parseGeminiError(400, {}, readFixture(here, 'missing-signature.json'));
    assert.deepEqual([error.status, error.type, error.retryable], [400, 'invalid_request_error', false]);
    assert.match(error.message, /missing a `thought_signature`/);
  });

  test('503 UNAVAILABLE and 500 INTERNAL → retryable', () => {
    assert.deepEqual(
      [
        parseGeminiError(503, {}, readFixture(here, 'unavailable.json')).retryable,
        parseGeminiError(500, {}, '{"error":{"code":500,"status":"INTERNAL"}}').retryable,
      ],
      [true, true],
    );
  });

  test("400 with reason API_KEY_INVALID (Gemini's bad-key answer) → non-retryable 502, not the client's 400", () => {
    const error = parseGeminiError(400, {}, readFixture(here, 'invalid-key.json'));
    assert.deepEqual([error.status, error.type, error.retryable], [502, 'api_error', false]);
  });

  test('403 PERMISSION_DENIED (a bad key) → non-retryable 502', () => {
    const error = parseGeminiError(403, {}, '[{"error":{"code":403,"message":"API key not valid","status":"PERMISSION_DENIED"}}]');
    assert.deepEqual([error.status, error.retryable], [502, false]);
  });
});
