/**
 * The official `openai` client against the gateway, whose upstream is an OpenAI Chat Completions
 * simulator: the shared scenarios plus what is particular to this protocol.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chatEndToEndSuite, SINGLE_MODEL } from '../../simulators/chat-e2e.ts';
import { startOpenAIChatSimulator } from '../../simulators/openai-chat.ts';

const context = chatEndToEndSuite({ kind: 'openai', startSimulator: (apiKey) => startOpenAIChatSimulator({ apiKey }) });

describe('openai chat upstream specifics', () => {
  test('usage is always requested upstream, even when the client does not ask for it', async () => {
    const { client, primary } = context();
    const stream = await client.chat.completions.create({ model: SINGLE_MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.ok(chunks.every((chunk) => !chunk.usage), 'the client did not ask for usage');
    assert.deepEqual(primary.requests.at(-1)!.body.stream_options, { include_usage: true });
  });

  test('request fields reach the upstream under their Chat names', async () => {
    const { client, primary } = context();
    await client.chat.completions.create({
      model: SINGLE_MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      max_completion_tokens: 100,
      stop: ['END'],
      seed: 3,
      reasoning_effort: 'low',
      user: 'end-user-1',
    });
    const body = primary.requests.at(-1)!.body;
    assert.deepEqual(
      { max: body.max_completion_tokens, stop: body.stop, seed: body.seed, effort: body.reasoning_effort, user: body.user },
      { max: 100, stop: ['END'], seed: 3, effort: 'low', user: 'end-user-1' },
    );
  });

  test('a length stop passes through', async () => {
    const { client } = context();
    const completion = await client.chat.completions.create({ model: SINGLE_MODEL, messages: [{ role: 'user', content: 'one two three four five' }], max_completion_tokens: 2 });
    assert.equal(completion.choices[0].finish_reason, 'length');
    assert.equal(completion.choices[0].message.content, 'Echo: one');
  });
});
