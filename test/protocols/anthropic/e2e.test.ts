/**
 * The official `openai` client against the gateway's chat completions endpoint, whose upstream is an
 * Anthropic Messages simulator: the shared scenarios plus what is particular to this protocol.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import OpenAI from 'openai';
import { formatUsd } from '../../../src/core/money.ts';
import { startAnthropicSimulator } from '../../simulators/anthropic.ts';
import { chatEndToEndSuite, FALLBACK_MODEL, SINGLE_MODEL } from '../../simulators/chat-e2e.ts';
import { assertRefusedBeforeUpstream } from '../helpers.ts';

const context = chatEndToEndSuite({
  kind: 'anthropic',
  startSimulator: (apiKey) => startAnthropicSimulator({ apiKey }),
  identify: (request) => ({ model: request.body?.model, credential: request.headers['x-api-key'] }),
});

/** Chat bodies with the gateway's own request options, which the SDK's types do not know. */
type WithGatewayOptions = OpenAI.ChatCompletionCreateParamsNonStreaming & { gateway?: { cache?: 'on' | 'off'; cache_ttl?: '5m' | '1h' } };

describe('anthropic upstream specifics', () => {
  test('request fields reach the upstream under their Messages names', async () => {
    const { client, primary } = context();
    await client.chat.completions.create({
      model: SINGLE_MODEL,
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'developer', content: 'Be kind.' }, { role: 'user', content: 'hi' }],
      max_completion_tokens: 100,
      stop: ['END'],
      temperature: 0.5,
      top_p: 0.9,
      user: 'end-user-1',
    });
    const body = primary.requests.at(-1)!.body;
    assert.equal(primary.requests.at(-1)!.headers['anthropic-version'], '2023-06-01');
    assert.deepEqual(
      { system: body.system, max: body.max_tokens, stop: body.stop_sequences, temperature: body.temperature, topP: body.top_p, metadata: body.metadata },
      { system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Be kind.' }], max: 100, stop: ['END'], temperature: 0.5, topP: 0.9, metadata: { user_id: 'end-user-1' } },
    );
  });

  for (const [name, fields] of [['seed', { seed: 1 }], ['presence_penalty', { presence_penalty: 0 }], ['logprobs', { logprobs: false }]] as const) {
    test(`explicit ${name} cannot be expressed: 400 unsupported_parameter before any upstream call`, () => assertRefusedBeforeUpstream(context(), fields, [name]));
  }

  test('529 overloaded falls back to the second provider, plain and streamed', async () => {
    const { client, primary, secondary } = context();
    primary.enqueue({ kind: 'status', status: 529 }, { kind: 'status', status: 529 });
    const completion = await client.chat.completions.create({ model: FALLBACK_MODEL, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(completion.choices[0].message.content, 'Echo: hi');
    const before = secondary.requests.length;
    const stream = await client.chat.completions.create({ model: FALLBACK_MODEL, messages: [{ role: 'user', content: 'again' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, 'Echo: again');
    assert.equal(secondary.requests.length, before + 1);
  });

  test('reasoning_effort → a thinking budget; none → thinking disabled', async () => {
    const { client, primary } = context();
    await client.chat.completions.create({ model: SINGLE_MODEL, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'medium' });
    // The route's max_tokens limit (4096) bounds the reply; medium thinks within half of it.
    assert.deepEqual(primary.requests.at(-1)!.body.thinking, { type: 'enabled', budget_tokens: 2048 });
    await client.chat.completions.create({ model: SINGLE_MODEL, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'none' });
    assert.deepEqual(primary.requests.at(-1)!.body.thinking, { type: 'disabled' });
  });

  test('tool loop with thinking: the turn\'s thinking rides the tool call\'s extra_content and is replayed first', async () => {
    const { client, primary } = context();
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await client.chat.completions.create({ model: SINGLE_MODEL, messages, tools, reasoning_effort: 'low' });
    const message = first.choices[0].message as OpenAI.ChatCompletionMessage & { tool_calls: (OpenAI.ChatCompletionMessageToolCall & { extra_content?: { anthropic?: { signature?: string } } })[] };
    const carried = message.tool_calls[0].extra_content?.anthropic?.signature;
    assert.ok(carried, 'the tool call carries the thinking');
    messages.push(message, { role: 'tool', tool_call_id: message.tool_calls[0].id, content: 'sunny' });
    const second = await client.chat.completions.create({ model: SINGLE_MODEL, messages, tools, reasoning_effort: 'low' });
    assert.equal(second.choices[0].message.content, 'Tool results: sunny');
    const replayed = primary.requests.at(-1)!.body.messages[1].content;
    assert.deepEqual(replayed[0], JSON.parse(carried)[0]);
    assert.equal(replayed.at(-1).type, 'tool_use');
  });

  test('gateway cache on: breakpoints upstream, then cached tokens reported and billed as the cost header says', async () => {
    const { client, primary, gateway } = context();
    const system = 'A long shared instruction for caching. '.repeat(30);
    const ask = (content: string) =>
      client.chat.completions
        .create({ model: SINGLE_MODEL, messages: [{ role: 'system', content: system }, { role: 'user', content }], gateway: { cache: 'on', cache_ttl: '1h' } } as WithGatewayOptions)
        .withResponse();
    const first = await ask('first question');
    const body = primary.requests.at(-1)!.body;
    assert.deepEqual(body.system.at(-1).cache_control, { type: 'ephemeral', ttl: '1h' });
    assert.deepEqual(body.messages.at(-1).content.at(-1).cache_control, { type: 'ephemeral', ttl: '1h' });
    const written = (first.data.usage!.prompt_tokens_details as { cache_creation_tokens?: number }).cache_creation_tokens ?? 0;
    assert.ok(written > 0);
    const owner = { kind: 'account', id: gateway.account.id } as const;
    const known = new Set((await gateway.store.listEntries(owner)).map((entry) => entry.id));
    const second = await ask('second question');
    assert.ok((second.data.usage!.prompt_tokens_details?.cached_tokens ?? 0) > 0, 'the system prefix is read from the cache');
    const charge = await waitForCharge(gateway, owner, known);
    assert.equal(formatUsd(charge), second.response.headers.get('x-gateway-cost-usd'));
  });
});

async function waitForCharge(gateway: ReturnType<typeof context>['gateway'], owner: { kind: 'account'; id: string }, known: ReadonlySet<string>): Promise<bigint> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const charge = (await gateway.store.listEntries(owner)).find((entry) => entry.kind === 'charge' && !known.has(entry.id));
    if (charge !== undefined) return charge.amount;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no charge was recorded');
}
