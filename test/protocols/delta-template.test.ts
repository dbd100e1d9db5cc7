/**
 * Text deltas read through a learned template (src/protocols/delta-template.ts) decode to the very
 * events of the full decoding: every recorded and fixture stream of the OpenAI chat and Anthropic
 * protocols, and streams built to trip the template, decoded both ways.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { learnDeltaTemplate } from '../../src/protocols/delta-template.ts';
import { createAnthropicStreamDecoder } from '../../src/protocols/anthropic/stream.ts';
import { createChatStreamDecoder } from '../../src/protocols/openai-chat/stream.ts';
import { comparable, decodeSse } from '../simulators/fixtures.ts';

const chatContent = (parsed: unknown): unknown => (parsed as { choices: { delta: { content: unknown } }[] }).choices[0].delta.content;

describe('delta template', () => {
  const chunk = (text: string) => JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] });

  test('reads the text of a chunk that differs from the learned one only in its text, unescaped', () => {
    const template = learnDeltaTemplate(chunk('Hello'), 'Hello', chatContent)!;
    for (const text of ['world', 'a "quoted" \\ line\nwith\ttabs', 'é and 日本 and 🎉', '']) assert.equal(template(chunk(text)), text);
    assert.equal(template('{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"\\u00e9"},"finish_reason":null}]}'), 'é');
  });

  test('refuses anything else: another byte outside the text, two values in its place, another event name', () => {
    const template = learnDeltaTemplate(chunk('Hello'), 'Hello', chatContent)!;
    assert.equal(template(chunk('x').replace('"m"', '"n"')), undefined);
    assert.equal(template(chunk('x').replace('null', '"stop"')), undefined);
    assert.equal(template(chunk('x').replace('"x"', '"x","role":"tool"')), undefined);
    assert.equal(template(chunk('x').replace('"x"', '7')), undefined);
    assert.equal(template(chunk('x'), 'content_block_delta'), undefined);
    assert.equal(template('{}'), undefined);
  });

  test('learns nothing when the text is not found once in its place', () => {
    // The text also stands elsewhere in the chunk.
    assert.equal(learnDeltaTemplate(JSON.stringify({ id: 'm', model: 'm', choices: [{ delta: { content: 'm' } }] }), 'm', chatContent), undefined);
    // The upstream escaped the text otherwise, and the same characters stand elsewhere: found there, the probe refuses it.
    const data = '{"id":"é","choices":[{"index":0,"delta":{"content":"\\u00e9"}}]}';
    assert.equal(learnDeltaTemplate(data, 'é', chatContent), undefined);
  });
});

/** SSE files of one protocol family in a folder of the test tree whose names start with `prefix`. */
function sseFiles(folder: string, prefix = ''): string[] {
  const directory = `${import.meta.dirname}/${folder}`;
  return readdirSync(directory)
    .filter((name) => name.endsWith('.sse') && name.startsWith(prefix))
    .map((name) => `${directory}/${name}`);
}

const sse = (messages: readonly (readonly [string | undefined, unknown])[]) =>
  messages
    .map(([event, data]) => `${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`)
    .join('');

const chatChunk = (delta: object, extra: object = {}) => ({
  id: 'chatcmpl-t',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: null, logprobs: null }],
  usage: null,
  ...extra,
});
/** Plain text chunks with a few that differ: an escaped text, an empty one, a second choice, a refusal, a stray field, a finish carrying text. */
const trickyChat = sse([
  [undefined, chatChunk({ role: 'assistant', content: '' })],
  [undefined, chatChunk({ content: 'Hello' })],
  [undefined, chatChunk({ content: ' "wor\\ld"\n' })],
  [undefined, chatChunk({ content: '' })],
  [
    undefined,
    '{"id":"chatcmpl-t","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"\\u00e9t\\u00e9"},"finish_reason":null,"logprobs":null}],"usage":null}',
  ],
  [undefined, chatChunk({ content: 'x' }, { system_fingerprint: 'fp' })],
  [undefined, chatChunk({ content: 'y', refusal: 'no' })],
  [undefined, chatChunk({ content: 'z' })],
  [undefined, { ...chatChunk({ content: 'two' }), choices: [...chatChunk({ content: 'two' }).choices, { index: 1, delta: { content: 'other' } }] }],
  [undefined, chatChunk({ reasoning_content: 'think' })],
  [undefined, chatChunk({ content: 'after reasoning' })],
  [undefined, chatChunk({ content: 'more' })],
  [undefined, { ...chatChunk({ content: 'last' }), choices: [{ index: 0, delta: { content: 'last' }, finish_reason: 'stop' }] }],
  [undefined, chatChunk({ content: 'after the finish' })],
  [undefined, { id: 'chatcmpl-t', choices: [], usage: { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 } }],
  [undefined, '[DONE]'],
]);

const anthropicDelta = (index: number, text: string) =>
  ['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } }] as const;
/** Text deltas of two blocks, with a delta that comes after its block stopped, one without an event name, and one named otherwise. */
const trickyAnthropic = sse([
  ['message_start', { type: 'message_start', message: { id: 'msg_t', model: 'm', usage: { input_tokens: 5, output_tokens: 1 } } }],
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
  anthropicDelta(0, 'Hello'),
  anthropicDelta(0, ' "there"\n'),
  anthropicDelta(0, ''),
  [undefined, anthropicDelta(0, 'unnamed')[1]],
  ['ping', anthropicDelta(0, 'named ping')[1]],
  anthropicDelta(0, 'again'),
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  anthropicDelta(0, 'after the stop'),
  ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'text', text: 'B' } }],
  anthropicDelta(1, 'b1'),
  anthropicDelta(1, 'b2'),
  ['content_block_stop', { type: 'content_block_stop', index: 1 }],
  ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 7 } }],
  ['message_stop', { type: 'message_stop' }],
]);

describe('streams decode to the same events with and without templates', () => {
  const families = [
    {
      name: 'openai chat',
      create: createChatStreamDecoder,
      files: [...sseFiles('openai-chat/fixtures'), ...sseFiles('../clients/recordings', 'chat-')],
      tricky: trickyChat,
    },
    {
      name: 'anthropic',
      create: createAnthropicStreamDecoder,
      files: [...sseFiles('anthropic/fixtures'), ...sseFiles('../clients/recordings', 'anthropic-')],
      tricky: trickyAnthropic,
    },
  ];
  for (const family of families) {
    const both = async (text: string, chunkSize?: number) => ({
      fast: comparable(await decodeSse(family.create(), text, chunkSize)),
      full: comparable(await decodeSse(family.create({ templates: false }), text, chunkSize)),
    });
    test(`${family.name}: every fixture and recording, whole and in small reads`, async () => {
      assert.ok(family.files.length >= 4);
      for (const file of family.files) {
        const text = readFileSync(file, 'utf8');
        for (const chunkSize of [7, 1 << 20]) {
          const { fast, full } = await both(text, chunkSize);
          assert.deepEqual(fast, full, file);
        }
      }
    });
    test(`${family.name}: a stream built to trip the template`, async () => {
      const { fast, full } = await both(family.tricky);
      assert.deepEqual(fast, full);
      assert.ok(full.filter((event) => (event as { type: string }).type === 'text-delta').length >= 6);
    });
  }
});
