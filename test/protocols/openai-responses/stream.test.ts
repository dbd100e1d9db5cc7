import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createResponsesStreamDecoder } from '../../../src/protocols/openai-responses/stream.ts';
import { comparable, decodeSse, readFixture } from '../../simulators/fixtures.ts';

const here = import.meta.dirname;
const decode = (text: string, chunkSize?: number) => decodeSse(createResponsesStreamDecoder(), text, chunkSize);

describe('openai responses: stream fixtures → canonical events', () => {
  test('text.sse', async () => {
    assert.deepEqual(await decode(readFixture(here, 'text.sse')), [
      { type: 'start', providerResponseId: 'resp_67c9fdcecf488190bdd9a0a5de7d15ee0e8d4e64e8e6b0ba', providerModel: 'gpt-4.1-2025-04-14' },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Hi there!' },
      { type: 'text-delta', index: 0, text: ' How can I help?' },
      { type: 'text-end', index: 0 },
      { type: 'usage', usage: { inputTokens: 37, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 11, reasoningTokens: 0 } },
      { type: 'finish', finish: { reason: 'stop', raw: 'completed' } },
    ]);
  });

  test('tools.sse: parallel function calls', async () => {
    assert.deepEqual(await decode(readFixture(here, 'tools.sse')), [
      { type: 'start', providerResponseId: 'resp_tools2', providerModel: 'gpt-4.1-2025-04-14' },
      { type: 'tool-call-start', index: 0, id: 'call_12345xyz', name: 'get_weather' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"location":' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '"Paris, France"}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-start', index: 1, id: 'call_67890abc', name: 'get_weather' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"location":"Bogotá, Colombia"}' },
      { type: 'tool-call-end', index: 1 },
      { type: 'usage', usage: { inputTokens: 291, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 23, reasoningTokens: 0 } },
      { type: 'finish', finish: { reason: 'tool_calls', raw: 'completed' } },
    ]);
  });

  test('reasoning.sse: summary deltas, the item reference as the signature', async () => {
    assert.deepEqual(await decode(readFixture(here, 'reasoning.sse')), [
      { type: 'start', providerResponseId: 'resp_reason2', providerModel: 'o4-mini-2025-04-16' },
      { type: 'reasoning-start', index: 0 },
      { type: 'reasoning-delta', index: 0, text: '**Counting**\n\n' },
      { type: 'reasoning-delta', index: 0, text: "Three r's." },
      { type: 'reasoning-end', index: 0, signature: { family: 'openai', value: '{"id":"rs_6820f383d7c08191846711c5df8233bc","encrypted_content":"gAAAAABoIPOH6jx1RV2p"}' } },
      { type: 'text-start', index: 1 },
      { type: 'text-delta', index: 1, text: 'Three.' },
      { type: 'text-end', index: 1 },
      { type: 'usage', usage: { inputTokens: 15, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 410, reasoningTokens: 384 } },
      { type: 'finish', finish: { reason: 'stop', raw: 'completed' } },
    ]);
  });

  test('length.sse: response.incomplete is a length finish; a trailing [DONE] is tolerated', async () => {
    const events = await decode(readFixture(here, 'length.sse'));
    assert.deepEqual(events.slice(-2), [
      { type: 'usage', usage: { inputTokens: 12, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 4, reasoningTokens: 0 } },
      { type: 'finish', finish: { reason: 'length', raw: 'max_output_tokens' } },
    ]);
  });

  test('mid-stream-error.sse: the error event ends the stream', async () => {
    assert.deepEqual(comparable(await decode(readFixture(here, 'mid-stream-error.sse'))), [
      { type: 'start', providerResponseId: 'resp_err1', providerModel: 'gpt-4.1-2025-04-14' },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Partial' },
      { type: 'error', status: 502, code: 'upstream_error', retryable: true },
    ]);
  });

  test('failed.sse: response.failed maps its error (here a rate limit)', async () => {
    assert.deepEqual(comparable(await decode(readFixture(here, 'failed.sse'))).at(-1), { type: 'error', status: 429, code: 'upstream_rate_limited', retryable: true });
  });

  test('the same events whatever the chunking', async () => {
    const text = readFixture(here, 'reasoning.sse');
    assert.deepEqual(await decode(text, 1), await decode(text, text.length));
  });

  test('a malformed event is an error event, and nothing is decoded after it', async () => {
    const events = comparable(await decode('event: response.created\ndata: {"type":"response.created","response":{"id":"r"}}\n\nevent: response.output_text.delta\ndata: {"type":\n\n'));
    assert.deepEqual(events, [{ type: 'start', providerResponseId: 'r' }, { type: 'error', status: 502, code: 'upstream_error', retryable: true }]);
  });

  test('a stream cut before its terminal event ends with an error', async () => {
    const text = readFixture(here, 'text.sse');
    const cut = text.slice(0, text.indexOf('event: response.completed'));
    assert.deepEqual(comparable(await decode(cut)).at(-1), { type: 'error', status: 502, code: 'upstream_error', retryable: true });
  });
});
