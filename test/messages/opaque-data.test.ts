/**
 * Provider data with no Messages field round-trips through a client (src/dialects/messages/opaque-data.ts):
 * what encodeMessage renders, sent back as the assistant turn, decodes to the same canonical parts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AssistantContentPart } from '../../src/canonical/index.ts';
import { decodeMessagesRequest } from '../../src/dialects/messages/decode.ts';
import { encodeMessage } from '../../src/dialects/messages/encode.ts';
import type { MessagesBody } from '../../src/dialects/messages/schema.ts';
import { call, settlement } from './rendering-fixtures.ts';

/** The assistant parts the gateway reads back from a client that replays the rendered content. */
function replayed(content: readonly AssistantContentPart[]): readonly AssistantContentPart[] {
  const message = encodeMessage({ content, finish: { reason: 'tool_calls', raw: 'tool_calls' }, usage: settlement.usage }, call, settlement);
  const body = {
    model: 'gateway/m',
    max_tokens: 100,
    messages: [
      { role: 'user', content: 'q' },
      // As a client sends it: the JSON of what it received.
      { role: 'assistant', content: JSON.parse(JSON.stringify(message.content)) },
    ],
  } as MessagesBody;
  const assistant = decodeMessagesRequest(body).request.messages[1];
  assert.equal(assistant.role, 'assistant');
  return assistant.content as readonly AssistantContentPart[];
}

describe('opaque provider data through the messages dialect', () => {
  test("a tool call's signature and extra_content ride in a redacted_thinking block before it and come back onto the call", () => {
    const parts: AssistantContentPart[] = [
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_call', id: 'c1', name: 'f', arguments: '{"a":1}', signature: { family: 'gemini', value: 'thought-sig' } },
      { type: 'tool_call', id: 'c2', name: 'g', arguments: '{}', extraContent: { google: { thought_signature: 'x' } } },
    ];
    const message = encodeMessage({ content: parts, finish: { reason: 'tool_calls', raw: 'tool_calls' }, usage: settlement.usage }, call, settlement);
    assert.deepEqual(
      message.content.map((block) => block.type),
      ['text', 'redacted_thinking', 'tool_use', 'redacted_thinking', 'tool_use'],
    );
    assert.deepEqual(replayed(parts), parts);
  });

  test("another family's reasoning signature comes back with its family; an Anthropic one as is", () => {
    const parts: AssistantContentPart[] = [
      { type: 'reasoning', text: 'hm', signature: { family: 'openai', value: 'encrypted' } },
      { type: 'reasoning', text: 'so', signature: { family: 'anthropic', value: 'sig' } },
      { type: 'reasoning', text: '', redacted: true, signature: { family: 'anthropic', value: 'opaque' } },
      { type: 'reasoning', text: '', redacted: true, signature: { family: 'gemini', value: 'hidden' } },
      { type: 'text', text: 'Done.' },
    ];
    assert.deepEqual(replayed(parts), parts);
  });

  test('an Anthropic tool call signature (its thinking blocks) is shown as thinking, not carried twice', () => {
    const signature = { family: 'anthropic' as const, value: JSON.stringify([{ type: 'thinking', thinking: 'hm', signature: 'sig' }]) };
    const message = encodeMessage(
      {
        content: [
          { type: 'reasoning', text: 'hm', signature: { family: 'anthropic', value: 'sig' } },
          { type: 'tool_call', id: 'c1', name: 'f', arguments: '{}', signature },
        ],
        finish: { reason: 'tool_calls', raw: 'tool_use' },
        usage: settlement.usage,
      },
      call,
      settlement,
    );
    assert.deepEqual(
      message.content.map((block) => block.type),
      ['thinking', 'tool_use'],
    );
  });
});
