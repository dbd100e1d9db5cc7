import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createResponsesStreamDecoder } from '../../../src/protocols/openai-responses/stream.ts';
import { comparable, decodeSse, readFixture } from '../../simulators/fixtures.ts';
import { cutTextEvents, finishEvent, reasoningEvents, startEvent, textEvents, toolCallEvents, UPSTREAM_FAULT, usageEvent } from '../helpers.ts';

const here = import.meta.dirname;
const decode = (text: string, chunkSize?: number) => decodeSse(createResponsesStreamDecoder(), text, chunkSize);

describe('openai responses: stream fixtures → canonical events', () => {
  test('text.sse', async () => {
    assert.deepEqual(await decode(readFixture(here, 'text.sse')), [
      startEvent('resp_67c9fdcecf488190bdd9a0a5de7d15ee0e8d4e64e8e6b0ba', 'gpt-4.1-2025-04-14'),
      ...textEvents(0, 'Hi there!', ' How can I help?'),
      usageEvent(37, 11),
      finishEvent('stop', 'completed'),
    ]);
  });

  test('tools.sse: parallel function calls', async () => {
    assert.deepEqual(await decode(readFixture(here, 'tools.sse')), [
      startEvent('resp_tools2', 'gpt-4.1-2025-04-14'),
      ...toolCallEvents(0, { id: 'call_12345xyz', name: 'get_weather' }, '{"location":', '"Paris, France"}'),
      ...toolCallEvents(1, { id: 'call_67890abc', name: 'get_weather' }, '{"location":"Bogotá, Colombia"}'),
      usageEvent(291, 23),
      finishEvent('tool_calls', 'completed'),
    ]);
  });

  test('reasoning.sse: summary deltas, the item reference as the signature', async () => {
    assert.deepEqual(await decode(readFixture(here, 'reasoning.sse')), [
      startEvent('resp_reason2', 'o4-mini-2025-04-16'),
      ...reasoningEvents(0, ['**Counting**\n\n', "Three r's."], {
        family: 'openai',
        value: '{"id":"rs_6820f383d7c08191846711c5df8233bc","encrypted_content":"gAAAAABoIPOH6jx1RV2p"}',
      }),
      ...textEvents(1, 'Three.'),
      usageEvent(15, 410, { reasoningTokens: 384 }),
      finishEvent('stop', 'completed'),
    ]);
  });

  test('reasoning-tools.sse: the completed reasoning item rides on the first call after it', async () => {
    const item = {
      type: 'reasoning',
      id: 'rs_68af4030baa48193b0b43b4c2a176a1a',
      summary: [{ type: 'summary_text', text: '**Checking the weather**\n\nThe user wants two cities.' }],
      encrypted_content: 'gAAAAABor0AyZ0Qk8mK3',
    };
    assert.deepEqual(await decode(readFixture(here, 'reasoning-tools.sse')), [
      startEvent('resp_reasontools2', 'o4-mini-2025-04-16'),
      ...reasoningEvents(0, ['**Checking the weather**\n\n', 'The user wants two cities.'], {
        family: 'openai',
        value: '{"id":"rs_68af4030baa48193b0b43b4c2a176a1a","encrypted_content":"gAAAAABor0AyZ0Qk8mK3"}',
      }),
      ...toolCallEvents(
        1,
        { id: 'call_12345xyz', name: 'get_weather', signature: { family: 'openai', value: JSON.stringify([item]) } },
        '{"location":"Paris, France"}',
      ),
      ...toolCallEvents(2, { id: 'call_67890abc', name: 'get_weather' }, '{"location":"Bogotá, Colombia"}'),
      usageEvent(84, 220, { reasoningTokens: 192 }),
      finishEvent('tool_calls', 'completed'),
    ]);
  });

  test('web-search.sse: the query from the completed call, one web-search event before the finish, citations on the text', async () => {
    const text = 'Seagrass meadows off Virginia have recovered to record size.';
    const citation = {
      url: 'https://www.vims.edu/newsandevents/topstories/2025/sav_report.php',
      title: 'Seagrass recovery reaches a new high',
      startIndex: 0,
      endIndex: text.length,
    };
    assert.deepEqual(await decode(readFixture(here, 'web-search.sse')), [
      startEvent('resp_websearch2', 'gpt-4.1-2025-04-14'),
      ...cutTextEvents(0, 'Seagrass meadows off Virginia', ' have recovered', ' to record size.'),
      { type: 'text-end', index: 0, citations: [citation] },
      { type: 'web-search', webSearch: { queries: ['positive news story today'], billedQueries: 1 } },
      usageEvent(310, 14),
      finishEvent('stop', 'completed'),
    ]);
  });

  test('length.sse: response.incomplete is a length finish; a trailing [DONE] is tolerated', async () => {
    const events = await decode(readFixture(here, 'length.sse'));
    assert.deepEqual(events.slice(-2), [usageEvent(12, 4), finishEvent('length', 'max_output_tokens')]);
  });

  test('mid-stream-error.sse: the error event ends the stream', async () => {
    assert.deepEqual(comparable(await decode(readFixture(here, 'mid-stream-error.sse'))), [
      startEvent('resp_err1', 'gpt-4.1-2025-04-14'),
      ...cutTextEvents(0, 'Partial'),
      UPSTREAM_FAULT,
    ]);
  });

  test('failed.sse: response.failed maps its error (here a rate limit)', async () => {
    assert.deepEqual(comparable(await decode(readFixture(here, 'failed.sse'))).at(-1), {
      type: 'error',
      status: 429,
      code: 'upstream_rate_limited',
      retryable: true,
    });
  });

  test('the same events whatever the chunking', async () => {
    const text = readFixture(here, 'reasoning.sse');
    assert.deepEqual(await decode(text, 1), await decode(text, text.length));
  });

  test('a malformed event is an error event, and nothing is decoded after it', async () => {
    const events = comparable(
      await decode('event: response.created\ndata: {"type":"response.created","response":{"id":"r"}}\n\nevent: response.output_text.delta\ndata: {"type":\n\n'),
    );
    assert.deepEqual(events, [{ type: 'start', providerResponseId: 'r' }, UPSTREAM_FAULT]);
  });

  test('a stream cut before its terminal event ends with an error', async () => {
    const text = readFixture(here, 'text.sse');
    const cut = text.slice(0, text.indexOf('event: response.completed'));
    assert.deepEqual(comparable(await decode(cut)).at(-1), UPSTREAM_FAULT);
  });
});
