import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { StreamEvent } from '../../../src/canonical/index.ts';
import { createChatStreamDecoder } from '../../../src/protocols/openai-chat/stream.ts';
import { comparable, decodeSse, readFixture } from '../../simulators/fixtures.ts';
import { cutTextEvents, finishEvent, reasoningEvents, startEvent, textEvents, UPSTREAM_FAULT, usageEvent } from '../helpers.ts';
import { HELLO_THERE_LOGPROBS } from './logprobs-expected.ts';

const here = import.meta.dirname;
const decode = (text: string, chunkSize?: number) => decodeSse(createChatStreamDecoder(), text, chunkSize);

describe('openai chat: stream fixtures → canonical events', () => {
  test('text.sse', async () => {
    assert.deepEqual(await decode(readFixture(here, 'text.sse')), [
      startEvent('chatcmpl-123', 'gpt-4o-mini'),
      ...textEvents(0, 'Hello', ' there!'),
      usageEvent(9, 3),
      finishEvent('stop', 'stop'),
    ]);
  });

  test('tools.sse: parallel calls tracked by index, ended at the finish', async () => {
    assert.deepEqual(await decode(readFixture(here, 'tools.sse')), [
      startEvent('chatcmpl-tools2', 'gpt-4.1'),
      { type: 'tool-call-start', index: 0, id: 'call_abc', name: 'get_weather' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"city":' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '"Paris"}' },
      { type: 'tool-call-start', index: 1, id: 'call_def', name: 'get_time' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"zone":"CET"}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-end', index: 1 },
      usageEvent(82, 40),
      finishEvent('tool_calls', 'tool_calls'),
    ]);
  });

  test('reasoning.sse: reasoning_content of compatible servers, usage on the finish chunk', async () => {
    assert.deepEqual(await decode(readFixture(here, 'reasoning.sse')), [
      startEvent('chatcmpl-reason2', 'deepseek-reasoner'),
      ...reasoningEvents(0, ['The user greets me', '; a short greeting back fits.']),
      ...textEvents(1, 'Hi!', ' What can I do for you?'),
      usageEvent(12, 30, { reasoningTokens: 22 }),
      finishEvent('stop', 'stop'),
    ]);
  });

  test('logprobs.sse: each text delta carries the logprobs of its chunk; an empty list on the role chunk adds nothing', async () => {
    assert.deepEqual(await decode(readFixture(here, 'logprobs.sse')), [
      startEvent('chatcmpl-logp2', 'gpt-4o-mini-2024-07-18'),
      { type: 'text-start', index: 0 },
      ...['Hello', ' there', '!'].map((text, position): StreamEvent => ({ type: 'text-delta', index: 0, text, logprobs: [HELLO_THERE_LOGPROBS[position]] })),
      { type: 'text-end', index: 0 },
      usageEvent(11, 3),
      finishEvent('stop', 'stop'),
    ]);
  });

  test('logprobs on a chunk whose content is empty still reach the text part', async () => {
    const chunk = { choices: [{ index: 0, delta: { content: '' }, logprobs: { content: [{ token: '', logprob: -2, bytes: [], top_logprobs: [] }] } }] };
    const events = await decode(`data: ${JSON.stringify(chunk)}\n\ndata: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n`);
    assert.deepEqual(events.slice(1, 3), [
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: '', logprobs: [{ token: '', logprob: -2, bytes: [], topLogprobs: [] }] },
    ]);
  });

  test('length.sse', async () => {
    const events = await decode(readFixture(here, 'length.sse'));
    assert.deepEqual(events.at(-1), finishEvent('length', 'length'));
    assert.deepEqual(
      events.filter((event) => event.type === 'text-delta').map((event) => event.text),
      ['Once upon', ' a time'],
    );
  });

  test('mid-stream-error.sse: the error chunk ends the stream as an error event', async () => {
    assert.deepEqual(comparable(await decode(readFixture(here, 'mid-stream-error.sse'))), [
      startEvent('chatcmpl-err1', 'gpt-4o'),
      ...cutTextEvents(0, 'Partial'),
      UPSTREAM_FAULT,
    ]);
  });

  test('the same events whatever the chunking (one byte at a time, or all at once)', async () => {
    const text = readFixture(here, 'tools.sse');
    assert.deepEqual(await decode(text, 1), await decode(text, text.length));
  });

  test('extra_content on a streamed tool call is carried on its start', async () => {
    const chunk = {
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              { index: 0, id: 'c', type: 'function', function: { name: 'f', arguments: '{}' }, extra_content: { google: { thought_signature: 's' } } },
            ],
          },
        },
      ],
    };
    const events = await decode(
      `data: ${JSON.stringify(chunk)}\n\ndata: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n`,
    );
    assert.deepEqual(events[1], { type: 'tool-call-start', index: 0, id: 'c', name: 'f', extraContent: { google: { thought_signature: 's' } } });
  });

  test('a malformed chunk is an error event, not an exception', async () => {
    const events = comparable(await decode('data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\ndata: {"choices": [\n\n'));
    assert.deepEqual(events.at(-1), UPSTREAM_FAULT);
  });

  test('a stream cut before its finish_reason ends with an error', async () => {
    const events = comparable(await decode('data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'));
    assert.deepEqual(events.at(-1), UPSTREAM_FAULT);
  });

  test('a finish without [DONE] (some compatible servers) still finishes', async () => {
    const events = await decode('data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}\n\n');
    assert.deepEqual(events.at(-1), finishEvent('stop', 'stop'));
  });
});
