import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createGeminiStreamDecoder } from '../../../src/protocols/gemini/stream.ts';
import { comparable, decodeSse, readFixture } from '../../simulators/fixtures.ts';
import { GROUNDING_CITATIONS, GROUNDING_SEARCH } from './grounding-expected.ts';

const here = import.meta.dirname;
const decode = (text: string, chunkSize?: number) => decodeSse(createGeminiStreamDecoder(), text, chunkSize);
const usage = (inputTokens: number, outputTokens: number, extra: object = {}) => ({
  type: 'usage',
  usage: { inputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens, reasoningTokens: 0, ...extra },
});

describe('gemini: stream fixtures → canonical events', () => {
  test('text.sse: pieces joined in one part, running usage, finish at the body end', async () => {
    assert.deepEqual(await decode(readFixture(here, 'text.sse')), [
      { type: 'start', providerResponseId: 'nvXJaPKsOfPjz7IPgpfWmQ0', providerModel: 'gemini-2.5-flash' },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Hello' },
      usage(8, 0),
      { type: 'text-delta', index: 0, text: '! How can I help' },
      usage(8, 0),
      { type: 'text-delta', index: 0, text: ' you today?' },
      { type: 'text-end', index: 0 },
      usage(8, 9),
      { type: 'finish', finish: { reason: 'stop', raw: 'STOP' } },
    ]);
  });

  test('tools.sse: each whole functionCall → start, one delta, end; signature on the call', async () => {
    assert.deepEqual(await decode(readFixture(here, 'tools.sse')), [
      { type: 'start', providerResponseId: 'ZfbJaNzEDoSVz7IPq6KpuQY', providerModel: 'gemini-3-pro-preview' },
      {
        type: 'tool-call-start',
        index: 0,
        id: 'call_0_get_weather',
        name: 'get_weather',
        signature: { family: 'gemini', value: 'CiQB0e2Kb2vEwyoTgBG3ZHxb0s7uGOuOXUTwiJEd+1sGfAY4Rl0KYQHR7YpvWpPSxEtAzu0ijX6hVzzaxvTk1TWPtjwwc4pfKSCKvx6kIr1zx3GVjkKiGFJ4yzAoqEU/2fI1sGTX2AFkEl9J5tk' },
      },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"city":"Paris"}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-start', index: 1, id: 'call_1_get_time', name: 'get_time' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"zone":"CET"}' },
      { type: 'tool-call-end', index: 1 },
      usage(74, 114, { reasoningTokens: 84 }),
      { type: 'finish', finish: { reason: 'tool_calls', raw: 'STOP' } },
    ]);
  });

  test('thinking.sse: thought parts as reasoning before the text', async () => {
    const events = await decode(readFixture(here, 'thinking.sse'));
    assert.deepEqual(events.filter((event) => event.type !== 'usage'), [
      { type: 'start', providerResponseId: 'thinking-2', providerModel: 'gemini-2.5-pro' },
      { type: 'reasoning-start', index: 0 },
      { type: 'reasoning-delta', index: 0, text: '**Analyzing the question**\n\nThe user asks for 27 times 453.' },
      { type: 'reasoning-delta', index: 0, text: ' Breaking it into 400 + 50 + 3.' },
      { type: 'reasoning-end', index: 0 },
      { type: 'text-start', index: 1 },
      { type: 'text-delta', index: 1, text: '27 × 453' },
      { type: 'text-delta', index: 1, text: ' = 12,231.' },
      { type: 'text-end', index: 1 },
      { type: 'finish', finish: { reason: 'stop', raw: 'STOP' } },
    ]);
    assert.deepEqual(events.filter((event) => event.type === 'usage').at(-1), usage(12, 239, { reasoningTokens: 228 }));
  });

  test('grounding.sse: citations on the text end, web search info before the finish', async () => {
    const events = await decode(readFixture(here, 'grounding.sse'));
    assert.deepEqual(events.slice(-4), [
      { type: 'text-end', index: 0, citations: GROUNDING_CITATIONS },
      { type: 'web-search', webSearch: GROUNDING_SEARCH },
      usage(319, 18),
      { type: 'finish', finish: { reason: 'stop', raw: 'STOP' } },
    ]);
  });

  test('mid-stream-error.sse: an {"error":…} chunk ends the stream as a retryable error', async () => {
    assert.deepEqual(comparable(await decode(readFixture(here, 'mid-stream-error.sse'))), [
      { type: 'start', providerResponseId: 'err-1', providerModel: 'gemini-2.5-flash' },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Partial' },
      usage(5, 0),
      { type: 'error', status: 503, code: 'upstream_unavailable', retryable: true },
    ]);
  });

  test('a body that ends without a finish reason ends in an error', async () => {
    const text = readFixture(here, 'text.sse');
    const cut = text.slice(0, text.lastIndexOf('data: '));
    assert.deepEqual(comparable(await decode(cut)).at(-1), { type: 'error', status: 502, code: 'upstream_error', retryable: true });
  });

  test('a blocked prompt → content_filter finish', async () => {
    const events = await decode('data: {"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":4,"totalTokenCount":4}}\n\n');
    assert.deepEqual(events.at(-1), { type: 'finish', finish: { reason: 'content_filter', raw: 'SAFETY' } });
  });

  test('the same events whatever the chunking', async () => {
    const text = readFixture(here, 'grounding.sse');
    assert.deepEqual(await decode(text, 1), await decode(text, text.length));
  });

  test('a malformed chunk is an error event, not an exception', async () => {
    assert.deepEqual(comparable(await decode('data: {"candidates": [\n\n')).at(-1), { type: 'error', status: 502, code: 'upstream_error', retryable: true });
  });
});
