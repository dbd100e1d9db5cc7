import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createGeminiStreamDecoder } from '../../../src/protocols/gemini/stream.ts';
import { comparable, decodeSse, readFixture } from '../../simulators/fixtures.ts';
import { cutTextEvents, finishEvent, reasoningEvents, startEvent, textEvents, toolCallEvents, UPSTREAM_FAULT, usageEvent } from '../helpers.ts';
import { GROUNDING_CITATIONS, GROUNDING_SEARCH } from './grounding-expected.ts';

const here = import.meta.dirname;
const decode = (text: string, chunkSize?: number) => decodeSse(createGeminiStreamDecoder(), text, chunkSize);
const SIGNATURE =
  'CiQB0e2Kb2vEwyoTgBG3ZHxb0s7uGOuOXUTwiJEd+1sGfAY4Rl0KYQHR7YpvWpPSxEtAzu0ijX6hVzzaxvTk1TWPtjwwc4pfKSCKvx6kIr1zx3GVjkKiGFJ4yzAoqEU/2fI1sGTX2AFkEl9J5tk';

describe('gemini: stream fixtures → canonical events', () => {
  test('text.sse: pieces joined in one part, running usage, finish at the body end', async () => {
    assert.deepEqual(await decode(readFixture(here, 'text.sse')), [
      startEvent('nvXJaPKsOfPjz7IPgpfWmQ0', 'gemini-2.5-flash'),
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Hello' },
      usageEvent(8, 0),
      { type: 'text-delta', index: 0, text: '! How can I help' },
      usageEvent(8, 0),
      { type: 'text-delta', index: 0, text: ' you today?' },
      { type: 'text-end', index: 0 },
      usageEvent(8, 9),
      finishEvent('stop', 'STOP'),
    ]);
  });

  test('tools.sse: each whole functionCall → start, one delta, end; signature on the call', async () => {
    assert.deepEqual(await decode(readFixture(here, 'tools.sse')), [
      startEvent('ZfbJaNzEDoSVz7IPq6KpuQY', 'gemini-3-pro-preview'),
      ...toolCallEvents(0, { id: 'call_0_get_weather', name: 'get_weather', signature: { family: 'gemini', value: SIGNATURE } }, '{"city":"Paris"}'),
      ...toolCallEvents(1, { id: 'call_1_get_time', name: 'get_time' }, '{"zone":"CET"}'),
      usageEvent(74, 114, { reasoningTokens: 84 }),
      finishEvent('tool_calls', 'STOP'),
    ]);
  });

  test('thinking.sse: thought parts as reasoning before the text', async () => {
    const events = await decode(readFixture(here, 'thinking.sse'));
    assert.deepEqual(
      events.filter((event) => event.type !== 'usage'),
      [
        startEvent('thinking-2', 'gemini-2.5-pro'),
        ...reasoningEvents(0, ['**Analyzing the question**\n\nThe user asks for 27 times 453.', ' Breaking it into 400 + 50 + 3.']),
        ...textEvents(1, '27 × 453', ' = 12,231.'),
        finishEvent('stop', 'STOP'),
      ],
    );
    assert.deepEqual(events.filter((event) => event.type === 'usage').at(-1), usageEvent(12, 239, { reasoningTokens: 228 }));
  });

  test('grounding.sse: citations on the text end, web search info before the finish', async () => {
    const events = await decode(readFixture(here, 'grounding.sse'));
    assert.deepEqual(events.slice(-4), [
      { type: 'text-end', index: 0, citations: GROUNDING_CITATIONS },
      { type: 'web-search', webSearch: GROUNDING_SEARCH },
      usageEvent(319, 18),
      finishEvent('stop', 'STOP'),
    ]);
  });

  test('mid-stream-error.sse: an {"error":…} chunk ends the stream as a retryable error', async () => {
    assert.deepEqual(comparable(await decode(readFixture(here, 'mid-stream-error.sse'))), [
      startEvent('err-1', 'gemini-2.5-flash'),
      ...cutTextEvents(0, 'Partial'),
      usageEvent(5, 0),
      { type: 'error', status: 503, code: 'upstream_unavailable', retryable: true },
    ]);
  });

  test('a body that ends without a finish reason ends in an error', async () => {
    const text = readFixture(here, 'text.sse');
    const cut = text.slice(0, text.lastIndexOf('data: '));
    assert.deepEqual(comparable(await decode(cut)).at(-1), UPSTREAM_FAULT);
  });

  test('a blocked prompt → content_filter finish', async () => {
    const events = await decode('data: {"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":4,"totalTokenCount":4}}\n\n');
    assert.deepEqual(events.at(-1), finishEvent('content_filter', 'SAFETY'));
  });

  test('the same events whatever the chunking', async () => {
    const text = readFixture(here, 'grounding.sse');
    assert.deepEqual(await decode(text, 1), await decode(text, text.length));
  });

  test('a malformed chunk is an error event, not an exception', async () => {
    assert.deepEqual(comparable(await decode('data: {"candidates": [\n\n')).at(-1), UPSTREAM_FAULT);
  });
});
