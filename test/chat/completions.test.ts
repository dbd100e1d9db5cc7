/**
 * Chat completions end to end on the built-in demo catalog, through the official `openai` client:
 * the response and chunk shapes, the cost header and the usage chunk cost against the ledger, tool
 * loops with opaque extra_content, structured output, web search, reasoning and output limits.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { formatUsd } from '../../src/core/money.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { eventually, ledger, newCharges, openai } from './helpers.ts';

const MODEL = 'gateway/atlas-4-5';

describe('chat completions on the demo catalog', () => {
  let gateway: TestGateway;
  let client: OpenAI;
  before(async () => {
    gateway = await startGateway();
    client = openai(gateway);
  });
  after(() => gateway.close());

  test('a plain completion has OpenAI’s shape, the public model id and a cost equal to the charge', async () => {
    const before = await ledger(gateway);
    const { data, response } = await client.chat.completions
      .create({
        model: MODEL,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hello there' },
        ],
      })
      .withResponse();
    assert.match(data.id, /^chatcmpl-[0-9a-z]+$/);
    assert.equal(data.object, 'chat.completion');
    assert.equal(data.model, MODEL);
    assert.ok(Number.isInteger(data.created));
    assert.equal(data.choices.length, 1);
    const [choice] = data.choices;
    assert.deepEqual(Object.keys(choice).sort(), ['finish_reason', 'index', 'logprobs', 'message']);
    assert.equal(choice.index, 0);
    assert.equal(choice.finish_reason, 'stop');
    assert.equal(choice.logprobs, null);
    assert.deepEqual(Object.keys(choice.message).sort(), ['content', 'refusal', 'role']);
    assert.equal(choice.message.role, 'assistant');
    assert.equal(choice.message.refusal, null);
    assert.match(choice.message.content ?? '', /Hello there/);
    const usage = data.usage!;
    assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
    assert.deepEqual(usage.prompt_tokens_details, { cached_tokens: 0, cache_creation_tokens: 0 });
    assert.deepEqual(usage.completion_tokens_details, { reasoning_tokens: 0 });
    assert.equal('x_gateway' in data, false);
    assert.match(response.headers.get('x-gateway-request-id') ?? '', /^req_/);
    const cost = response.headers.get('x-gateway-cost-usd');
    const charges = await newCharges(gateway, before);
    assert.equal(charges.length, 1);
    assert.equal(formatUsd(charges[0].amount), cost);
    assert.equal(charges[0].requestId, response.headers.get('x-gateway-request-id'));
    const after = await ledger(gateway);
    assert.equal(after.balance.reserved, 0n);
    assert.equal(before.balance.balance - after.balance.balance, charges[0].amount);
  });

  test('an alias resolves to the model id in the response', async () => {
    const completion = await client.chat.completions.create({ model: 'quill-free', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(completion.model, 'gateway/quill-1-free');
  });

  test('a stream: role chunk first, the same text, a finish chunk, then a usage chunk whose cost is the charge', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Tell me something about streams of data' }];
    const plain = await client.chat.completions.create({ model: MODEL, messages });
    const before = await ledger(gateway);
    const stream = await client.chat.completions.create({ model: MODEL, messages, stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    assert.equal(text, plain.choices[0].message.content);
    const finishes = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
    assert.equal(finishes.length, 1);
    assert.equal(finishes[0].choices[0].finish_reason, 'stop');
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    const usage = last.usage as OpenAI.CompletionUsage & { cost: string };
    assert.deepEqual({ ...usage, cost: undefined }, { ...plain.usage, cost: undefined }, 'the stream bills the same usage as the plain call');
    for (const chunk of chunks) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      assert.equal(chunk.model, MODEL);
      assert.equal(chunk.id, chunks[0].id);
    }
    const charges = await eventually(async () => {
      const found = await newCharges(gateway, before);
      assert.equal(found.length, 1);
      return found;
    });
    assert.equal(usage.cost, formatUsd(charges[0].amount));
  });

  test('the raw stream ends with data: [DONE]; without include_usage there is no usage chunk', async () => {
    const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(response.headers.get('x-gateway-cost-usd'), null);
    const body = await response.text();
    const events = body.split('\n\n').filter(Boolean);
    assert.equal(events.at(-1), 'data: [DONE]');
    const payloads = events.slice(0, -1).map((event) => JSON.parse(event.replace(/^data: /, '')));
    assert.ok(payloads.every((payload) => payload.choices.length === 1 && !('usage' in payload)));
  });

  test('the SDK stream helper assembles the completion', async () => {
    const completion = await client.chat.completions.stream({ model: MODEL, messages: [{ role: 'user', content: 'Assemble me' }] }).finalChatCompletion();
    assert.equal(completion.choices[0].finish_reason, 'stop');
    assert.match(completion.choices[0].message.content ?? '', /Assemble me/);
  });

  describe('a tool loop', () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          parameters: {
            type: 'object',
            properties: {
              city: { type: 'string', minLength: 2 },
              unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
              days: { type: 'integer', minimum: 1 },
            },
            required: ['city', 'unit', 'days'],
            additionalProperties: false,
          },
          strict: true,
        },
      },
    ];

    test('a call with schema-valid arguments and opaque extra_content, replayed unchanged to finish the loop', async () => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
      const first = await client.chat.completions.create({ model: MODEL, messages, tools });
      const choice = first.choices[0];
      assert.equal(choice.finish_reason, 'tool_calls');
      assert.equal(choice.message.content, null);
      const call = choice.message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall & { extra_content?: unknown };
      assert.equal(call.type, 'function');
      assert.equal(call.function.name, 'get_weather');
      assert.deepEqual(JSON.parse(call.function.arguments), { city: 'xx', unit: 'celsius', days: 1 });
      assert.ok(call.extra_content && typeof call.extra_content === 'object', 'extra_content on the call');
      messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: '18C and sunny' });
      const second = await client.chat.completions.create({ model: MODEL, messages, tools });
      assert.equal(second.choices[0].finish_reason, 'stop');
      assert.match(second.choices[0].message.content ?? '', /18C and sunny/);
    });

    test('an altered extra_content is refused by the provider that signed it (400)', async () => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Rome?' }];
      const first = await client.chat.completions.create({ model: MODEL, messages, tools });
      const message = structuredClone(first.choices[0].message) as OpenAI.ChatCompletionMessage & { tool_calls: Array<{ extra_content: unknown }> };
      message.tool_calls[0].extra_content = { simulated: { signature: 'forged' } };
      const callId = first.choices[0].message.tool_calls![0].id;
      const before = await ledger(gateway);
      await assert.rejects(
        client.chat.completions.create({ model: MODEL, tools, messages: [...messages, message, { role: 'tool', tool_call_id: callId, content: 'x' }] }),
        (error: unknown) => error instanceof OpenAI.BadRequestError && (error.error as { param?: string }).param === 'messages',
      );
      assert.equal((await newCharges(gateway, before)).length, 0, 'a refused call is not charged');
      assert.equal((await ledger(gateway)).balance.reserved, 0n);
    });

    test('a streamed tool call: id, name and extra_content on its first delta, then arguments', async () => {
      const stream = await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'Weather?' }],
        tools,
        tool_choice: 'required',
        stream: true,
      });
      const deltas: OpenAI.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
      let finish: string | null = null;
      for await (const chunk of stream) {
        deltas.push(...(chunk.choices[0]?.delta.tool_calls ?? []));
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      assert.equal(finish, 'tool_calls');
      const [head, ...rest] = deltas;
      assert.equal(head.index, 0);
      assert.ok(head.id && head.function?.name === 'get_weather' && head.function.arguments === '');
      assert.ok((head as { extra_content?: unknown }).extra_content);
      assert.ok(rest.length > 0 && rest.every((delta) => delta.index === 0 && delta.id === undefined && delta.function?.name === undefined));
      assert.deepEqual(JSON.parse(rest.map((delta) => delta.function?.arguments).join('')), { city: 'xx', unit: 'celsius', days: 1 });
    });

    test('tool_choice none answers in text; a named tool is called', async () => {
      const none = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], tools, tool_choice: 'none' });
      assert.equal(none.choices[0].finish_reason, 'stop');
      assert.equal(none.choices[0].message.tool_calls, undefined);
      const named = await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'hi' }],
        tools,
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
      });
      assert.equal(named.choices[0].message.tool_calls?.[0].type === 'function' && named.choices[0].message.tool_calls[0].function.name, 'get_weather');
    });
  });

  test('json_schema output is valid against the schema; json_object output is an object', async () => {
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, tags: { type: 'array', items: { type: 'string' }, minItems: 1 }, score: { type: 'number', exclusiveMinimum: 0 } },
      required: ['name', 'tags', 'score'],
      additionalProperties: false,
    };
    const structured = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Describe a city' }],
      response_format: { type: 'json_schema', json_schema: { name: 'city', schema, strict: true } },
    });
    const parsed = JSON.parse(structured.choices[0].message.content ?? '');
    assert.deepEqual(Object.keys(parsed).sort(), ['name', 'score', 'tags']);
    assert.equal(typeof parsed.name, 'string');
    assert.ok(parsed.tags.length >= 1 && parsed.score > 0);
    const object = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'JSON please' }],
      response_format: { type: 'json_object' },
    });
    const value = JSON.parse(object.choices[0].message.content ?? '');
    assert.equal(typeof value, 'object');
  });

  test('web search: x_gateway.web_search with the billed queries, search billed on top of tokens', async () => {
    const before = await ledger(gateway);
    const { data, response } = await client.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'latest news about the harbour' }], tools: [{ type: 'web_search' } as never] })
      .withResponse();
    const extension = (data as unknown as { x_gateway: { web_search: { queries: string[]; search_entry_point_html: string; billed_queries: number } } })
      .x_gateway;
    assert.deepEqual(extension.web_search.queries, ['latest news about the harbour']);
    assert.match(extension.web_search.search_entry_point_html, /search-entry-point/);
    assert.equal(extension.web_search.billed_queries, 1);
    const charges = await newCharges(gateway, before);
    assert.equal(formatUsd(charges[0].amount), response.headers.get('x-gateway-cost-usd'));
    // The cheapest route, at the listed prices (3 $/M in, 15 $/M out, 0.01 $ per search), served it.
    const usage = data.usage!;
    assert.equal(charges[0].amount, BigInt(usage.prompt_tokens) * 3_000_000n + BigInt(usage.completion_tokens) * 15_000_000n + 10_000_000_000n);
  });

  test('logprobs: every token of the text with its bytes and top alternatives; a stream carries the same tokens', async () => {
    const request = { model: MODEL, messages: [{ role: 'user' as const, content: 'Weigh every word' }], logprobs: true, top_logprobs: 3 };
    const completion = await client.chat.completions.create(request);
    const { content, refusal } = completion.choices[0].logprobs!;
    assert.equal(refusal, null);
    assert.ok(content && content.length > 1);
    assert.equal(content.map((entry) => entry.token).join(''), completion.choices[0].message.content);
    for (const entry of content) {
      assert.deepEqual(entry.bytes, [...Buffer.from(entry.token, 'utf8')]);
      assert.ok(entry.logprob < 0, `logprob ${entry.logprob}`);
      assert.equal(entry.top_logprobs.length, 3);
      assert.deepEqual(entry.top_logprobs[0], { token: entry.token, logprob: entry.logprob, bytes: entry.bytes });
      const values = entry.top_logprobs.map((top) => top.logprob);
      assert.deepEqual(
        values,
        [...values].sort((a, b) => b - a),
        'likeliest first',
      );
      assert.ok(values.reduce((sum, value) => sum + Math.exp(value), 0) <= 1, 'probabilities add up to at most 1');
    }
    const streamed: OpenAI.ChatCompletionTokenLogprob[] = [];
    for await (const chunk of await client.chat.completions.create({ ...request, stream: true })) streamed.push(...(chunk.choices[0]?.logprobs?.content ?? []));
    assert.deepEqual(streamed, content);
  });

  test('reasoning_effort high returns reasoning text and counts reasoning tokens', async () => {
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Think first' }], reasoning_effort: 'high' });
    const message = completion.choices[0].message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
    assert.ok(message.reasoning_content && message.reasoning_content.length > 0);
    assert.ok(completion.usage!.completion_tokens_details!.reasoning_tokens! > 0);
    const none = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Think first' }], reasoning_effort: 'none' });
    assert.equal((none.choices[0].message as { reasoning_content?: string }).reasoning_content, undefined);
  });

  test('max_completion_tokens cuts the output with finish length; stop sequences end it early', async () => {
    const limited = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'a long answer please' }],
      max_completion_tokens: 3,
    });
    assert.equal(limited.choices[0].finish_reason, 'length');
    assert.equal(limited.usage!.completion_tokens, 3);
    const stopped = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'count: one two three' }], stop: ['two', 'zzz'] });
    assert.equal(stopped.choices[0].finish_reason, 'stop');
    assert.match(stopped.choices[0].message.content ?? '', /one $/);
  });
});
