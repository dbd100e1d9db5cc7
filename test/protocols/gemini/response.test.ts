import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CanonicalResult } from '../../../src/canonical/index.ts';
import { parseGeminiError } from '../../../src/protocols/gemini/errors.ts';
import { parseGeminiResponse } from '../../../src/protocols/gemini/response.ts';
import { readFixture, readJsonFixture } from '../../simulators/fixtures.ts';
import { GROUNDING_CITATIONS, GROUNDING_SEARCH } from './grounding-expected.ts';

const here = import.meta.dirname;
const usage = (inputTokens: number, outputTokens: number, extra: object = {}) => ({ inputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens, reasoningTokens: 0, ...extra });
const SIGNATURE = 'CiQB0e2Kb2vEwyoTgBG3ZHxb0s7uGOuOXUTwiJEd+1sGfAY4Rl0KYQHR7YpvWpPSxEtAzu0ijX6hVzzaxvTk1TWPtjwwc4pfKSCKvx6kIr1zx3GVjkKiGFJ4yzAoqEU/2fI1sGTX2AFkEl9J5tk';

describe('gemini: response fixtures → canonical result', () => {
  const rows: { fixture: string; expected: CanonicalResult }[] = [
    {
      fixture: 'text.json',
      expected: {
        providerResponseId: 'mfXJaL6pJ5ymz7IP6cTsoAQ',
        providerModel: 'gemini-2.5-flash',
        content: [{ type: 'text', text: 'Hello! How can I help you today?' }],
        finish: { reason: 'stop', raw: 'STOP' },
        usage: usage(8, 9),
      },
    },
    {
      fixture: 'tools.json',
      expected: {
        providerResponseId: 'ZfbJaNzEDoSVz7IPq6KpuQY',
        providerModel: 'gemini-3-pro-preview',
        content: [
          { type: 'tool_call', id: 'call_0_get_weather', name: 'get_weather', arguments: '{"city":"Paris"}', signature: { family: 'gemini', value: SIGNATURE } },
          { type: 'tool_call', id: 'call_1_get_time', name: 'get_time', arguments: '{"zone":"CET"}' },
        ],
        // A turn with function calls reports STOP; the calls decide.
        finish: { reason: 'tool_calls', raw: 'STOP' },
        usage: usage(74, 114, { reasoningTokens: 84 }),
      },
    },
    {
      fixture: 'thinking.json',
      expected: {
        providerResponseId: 'thinking-1',
        providerModel: 'gemini-2.5-pro',
        content: [
          {
            type: 'reasoning',
            text: '**Analyzing the question**\n\nThe user asks for 27 times 453. Breaking it into 400 + 50 + 3.',
            signature: { family: 'gemini', value: 'EvYBCvMBAdHtim9KxyBCyqj3ZCqn0Na6Yb5yTUmd0Nt4U5k' },
          },
          { type: 'text', text: '27 × 453 = 12,231.' },
        ],
        finish: { reason: 'stop', raw: 'STOP' },
        usage: usage(12, 239, { reasoningTokens: 228 }),
      },
    },
    {
      fixture: 'length.json',
      expected: {
        providerResponseId: 'len-1',
        providerModel: 'gemini-2.5-flash-lite',
        content: [{ type: 'text', text: 'Once upon a time' }],
        finish: { reason: 'length', raw: 'MAX_TOKENS' },
        usage: usage(6, 4),
      },
    },
    {
      fixture: 'cached-usage.json',
      expected: {
        providerResponseId: 'cache-1',
        providerModel: 'gemini-2.5-flash',
        content: [{ type: 'text', text: 'The report covers Q3.' }],
        finish: { reason: 'stop', raw: 'STOP' },
        // promptTokenCount includes the cached part.
        usage: usage(102, 6, { cacheReadTokens: 2048 }),
      },
    },
    {
      fixture: 'grounding.json',
      expected: {
        providerResponseId: 'ground-1',
        providerModel: 'gemini-2.5-flash',
        content: [{ type: 'text', text: 'España ganó la Eurocopa 2024. Derrotó a Inglaterra 2-1.' }],
        finish: { reason: 'stop', raw: 'STOP' },
        // Search results fed back to the model are input.
        usage: usage(319, 18),
        webSearch: GROUNDING_SEARCH,
        citations: GROUNDING_CITATIONS,
      },
    },
    {
      fixture: 'blocked.json',
      expected: {
        providerResponseId: 'blocked-1',
        providerModel: 'gemini-2.5-flash',
        content: [],
        finish: { reason: 'content_filter', raw: 'PROHIBITED_CONTENT' },
        usage: usage(7, 0),
      },
    },
    {
      fixture: 'safety.json',
      expected: {
        providerResponseId: 'safety-1',
        providerModel: 'gemini-2.5-flash',
        content: [],
        finish: { reason: 'content_filter', raw: 'SAFETY' },
        usage: usage(11, 0),
      },
    },
  ];
  for (const row of rows) {
    test(row.fixture, () => {
      assert.deepEqual(parseGeminiResponse(readJsonFixture(here, row.fixture)), row.expected);
    });
  }

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

describe('gemini: upstream errors (PROTOCOLS.md §9.9)', () => {
  test('429 RESOURCE_EXHAUSTED → retryable, waiting as RetryInfo says', () => {
    const error = parseGeminiError(429, {}, readFixture(here, 'rate-limit.json'));
    assert.deepEqual([error.status, error.code, error.retryable, error.retryAfterSeconds], [429, 'upstream_rate_limited', true, 36]);
  });

  test('a retry-after header wins over RetryInfo', () => {
    assert.equal(parseGeminiError(429, { 'retry-after': '3' }, readFixture(here, 'rate-limit.json')).retryAfterSeconds, 3);
  });

  test('400 INVALID_ARGUMENT (a missing thought signature) → the client\'s 400 with the message', () => {
    const error = parseGeminiError(400, {}, readFixture(here, 'missing-signature.json'));
    assert.deepEqual([error.status, error.type, error.retryable], [400, 'invalid_request_error', false]);
    assert.match(error.message, /missing a `thought_signature`/);
  });

  test('503 UNAVAILABLE and 500 INTERNAL → retryable', () => {
    assert.deepEqual([parseGeminiError(503, {}, readFixture(here, 'unavailable.json')).retryable, parseGeminiError(500, {}, '{"error":{"code":500,"status":"INTERNAL"}}').retryable], [true, true]);
  });

  test('400 with reason API_KEY_INVALID (Gemini\'s bad-key answer) → non-retryable 502, not the client\'s 400', () => {
    const error = parseGeminiError(400, {}, readFixture(here, 'invalid-key.json'));
    assert.deepEqual([error.status, error.type, error.retryable], [502, 'api_error', false]);
  });

  test('403 PERMISSION_DENIED (a bad key) → non-retryable 502', () => {
    const error = parseGeminiError(403, {}, '[{"error":{"code":403,"message":"API key not valid","status":"PERMISSION_DENIED"}}]');
    assert.deepEqual([error.status, error.retryable], [502, false]);
  });
});
