/**
 * The official `openai` client against the gateway, whose upstream is an OpenAI Chat Completions
 * simulator: the shared scenarios plus what is particular to this protocol (logprobs, opaque
 * `extra_content` replay, search models' web search billed per request).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { formatUsd, usdToPicos } from '../../../src/core/money.ts';
import { eventually, ledger, newCharges, openai, picosPerToken } from '../../chat/helpers.ts';
import { startGateway, type TestGateway } from '../../helpers/gateway.ts';
import { chatEndToEndSuite, SINGLE_MODEL } from '../../simulators/chat-e2e.ts';
import { messagesEndToEndSuite } from '../../simulators/messages-e2e.ts';
import { responsesEndToEndSuite } from '../../simulators/responses-e2e.ts';
import { webSearchConfig } from '../../simulators/gateway-config.ts';
import { chatTokenLogprob, opaqueExtraContent, searchAnnotations, startOpenAIChatSimulator, type OpenAIChatSimulator } from '../../simulators/openai-chat.ts';
import { tokenize } from '../../simulators/reply.ts';

const context = chatEndToEndSuite({
  kind: 'openai',
  startSimulator: (apiKey) => startOpenAIChatSimulator({ apiKey }),
  capabilities: {
    cachedTokens: (simulator, tokens) => {
      simulator.options.cachedTokens = tokens;
    },
  },
});

messagesEndToEndSuite({
  kind: 'openai',
  startSimulator: (apiKey) => startOpenAIChatSimulator({ apiKey }),
  budgetThinking: false,
});

responsesEndToEndSuite({
  kind: 'openai',
  startSimulator: (apiKey) => startOpenAIChatSimulator({ apiKey }),
  reasoningText: false,
});

type ToolCallWithExtra = OpenAI.ChatCompletionMessageFunctionToolCall & { extra_content?: unknown };

describe('openai chat upstream specifics', () => {
  test('usage is always requested upstream, even when the client does not ask for it', async () => {
    const { client, primary } = context();
    const stream = await client.chat.completions.create({ model: SINGLE_MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.ok(
      chunks.every((chunk) => !chunk.usage),
      'the client did not ask for usage',
    );
    assert.deepEqual(primary.requests.at(-1)!.body.stream_options, { include_usage: true });
  });

  test('an extra_body option the route allows reaches the upstream body at its top level; one it does not allow is a 400', async () => {
    const { client, primary } = context();
    const sent = primary.requests.length;
    const ask = (extra_body: unknown) =>
      client.chat.completions.create({
        model: SINGLE_MODEL,
        messages: [{ role: 'user', content: 'hi' }],
        extra_body,
      } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    await ask({ cloud_a: { top_k: 5 } });
    const body = primary.requests.at(-1)!.body;
    assert.equal(body.top_k, 5);
    assert.equal(body.cloud_a, undefined);
    await assert.rejects(
      ask({ cloud_a: { top_p: 0.5 } }),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 400 && error.param === 'extra_body.cloud_a.top_p',
    );
    assert.equal(primary.requests.length, sent + 1);
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
    const completion = await client.chat.completions.create({
      model: SINGLE_MODEL,
      messages: [{ role: 'user', content: 'one two three four five' }],
      max_completion_tokens: 2,
    });
    assert.equal(completion.choices[0].finish_reason, 'length');
    assert.equal(completion.choices[0].message.content, 'Echo: one');
  });

  test("tool loop: a provider's opaque extra_content reaches the client verbatim and goes back upstream unchanged", async () => {
    const { client, primary } = context();
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Lima?' }];
    const first = await client.chat.completions.create({ model: SINGLE_MODEL, messages, tools });
    const call = first.choices[0].message.tool_calls![0] as ToolCallWithExtra;
    assert.deepEqual(call.extra_content, opaqueExtraContent(call.id));
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '21C' });
    const second = await client.chat.completions.create({ model: SINGLE_MODEL, messages, tools });
    // The simulator refuses a turn whose call lost or changed its extra_content, so this answer is the check.
    assert.equal(second.choices[0].message.content, 'Tool results: 21C');
    assert.deepEqual(primary.requests.at(-1)!.body.messages[1].tool_calls, [
      { id: call.id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"sample"}' }, extra_content: opaqueExtraContent(call.id) },
    ]);
  });

  test("a tool call replayed with altered extra_content gets the provider's 400", async () => {
    const { client } = context();
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }];
    const first = await client.chat.completions.create({ model: SINGLE_MODEL, messages: [{ role: 'user', content: 'Look it up' }], tools });
    const call = { ...(first.choices[0].message.tool_calls![0] as ToolCallWithExtra), extra_content: { vendor: { state: 'forged' } } };
    await assert.rejects(
      client.chat.completions.create({
        model: SINGLE_MODEL,
        tools,
        messages: [
          { role: 'user', content: 'Look it up' },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: call.id, content: 'x' },
        ],
      }),
      (error: unknown) => error instanceof OpenAI.APIError && error.status === 400 && /extra_content/.test(error.message),
    );
  });

  describe('logprobs', () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'rain in the harbour' }];
    const expected = tokenize('Echo: rain in the harbour').map((token) => chatTokenLogprob(token, 2));

    test('JSON: asked for upstream, every content token comes back with its top alternatives', async () => {
      const { client, primary } = context();
      const completion = await client.chat.completions.create({ model: SINGLE_MODEL, messages, logprobs: true, top_logprobs: 2 });
      const body = primary.requests.at(-1)!.body;
      assert.deepEqual([body.logprobs, body.top_logprobs], [true, 2]);
      assert.deepEqual(completion.choices[0].logprobs, { content: expected, refusal: null });
      assert.equal(completion.choices[0].logprobs!.content!.map((entry) => entry.token).join(''), completion.choices[0].message.content);
    });

    test("stream: each chunk carries its tokens' logprobs, and the SDK helper assembles the same list", async () => {
      const { client } = context();
      const stream = client.chat.completions.stream({ model: SINGLE_MODEL, messages, logprobs: true, top_logprobs: 2 });
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      stream.on('chunk', (chunk) => chunks.push(chunk));
      const completion = await stream.finalChatCompletion();
      const withLogprobs = chunks.filter((chunk) => chunk.choices[0]?.logprobs);
      assert.deepEqual(
        withLogprobs.map((chunk) => chunk.choices[0].delta.content),
        tokenize('Echo: rain in the harbour'),
      );
      assert.deepEqual(
        withLogprobs.flatMap((chunk) => chunk.choices[0].logprobs!.content!),
        expected,
      );
      assert.deepEqual(completion.choices[0].logprobs?.content, expected);
    });

    test('not asked for: null, and nothing asked upstream', async () => {
      const { client, primary } = context();
      const completion = await client.chat.completions.create({ model: SINGLE_MODEL, messages });
      assert.equal(completion.choices[0].logprobs, null);
      assert.equal('logprobs' in primary.requests.at(-1)!.body, false);
    });
  });
});

describe('openai chat web search (search models) → annotations and x_gateway.web_search', () => {
  const SEARCH_MODEL = 'gateway/search-chat';
  const SEARCH_PRICE = '0.025';
  const QUESTION = 'Who won Euro 2024';
  let sim: OpenAIChatSimulator;
  let gateway: TestGateway;
  let client: OpenAI;

  before(async () => {
    sim = await startOpenAIChatSimulator({ apiKey: 'o-key' });
    // Chat Completions reports no query count: a search model is billed once per search request.
    const config = webSearchConfig({ id: 'openai', kind: 'openai', baseUrl: sim.baseUrl, apiKeyEnv: 'OPENAI_KEY' }, SEARCH_PRICE, {
      [SEARCH_MODEL]: 'per_request',
    });
    gateway = await startGateway({ config, env: { OPENAI_KEY: 'o-key' }, creditUsd: '10' });
    client = openai(gateway);
  });
  after(async () => {
    await gateway?.close();
    await sim?.close();
  });

  const request = { model: SEARCH_MODEL, messages: [{ role: 'user', content: QUESTION }], tools: [{ type: 'web_search' }] };
  const answer = `Echo: ${QUESTION}`;
  const citation = searchAnnotations(QUESTION, answer);
  const extension = { web_search: { queries: [], search_entry_point_html: '', billed_queries: 1 } };
  /** Input at 1 $/M and output at 2 $/M, plus one search unit. */
  const byHand = (usage: OpenAI.CompletionUsage) =>
    BigInt(usage.prompt_tokens) * picosPerToken('1') + BigInt(usage.completion_tokens) * picosPerToken('2') + usdToPicos(SEARCH_PRICE);

  test('JSON: web_search_options upstream, the citations as annotations, one search unit billed; cost header = ledger charge', async () => {
    const before = await ledger(gateway);
    const { data, response } = await client.chat.completions.create(request as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse();
    const body = sim.requests.at(-1)!.body;
    assert.deepEqual(body.web_search_options, {});
    assert.equal(body.tools, undefined);
    assert.equal(data.choices[0].message.content, answer);
    assert.deepEqual(data.choices[0].message.annotations, citation);
    assert.deepEqual((data as unknown as { x_gateway?: unknown }).x_gateway, extension);
    const [charge] = await eventually(async () => {
      const charges = await newCharges(gateway, before);
      assert.equal(charges.length, 1);
      return charges;
    });
    assert.equal(response.headers.get('x-gateway-cost-usd'), formatUsd(charge.amount));
    assert.equal(charge.amount, byHand(data.usage!));
  });

  test('stream: the annotations in a delta, the extension on the finish chunk, the usage cost = ledger charge', async () => {
    const before = await ledger(gateway);
    const stream = await client.chat.completions.create({
      ...request,
      stream: true,
      stream_options: { include_usage: true },
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.equal(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), answer);
    const deltas = chunks.map((chunk) => chunk.choices[0]?.delta as { annotations?: unknown } | undefined);
    assert.deepEqual(
      deltas.flatMap((delta) => (delta?.annotations ? [delta.annotations] : [])),
      [citation],
    );
    const finish = chunks.find((chunk) => chunk.choices[0]?.finish_reason) as unknown as { x_gateway?: unknown };
    assert.deepEqual(finish.x_gateway, extension);
    const usage = chunks.at(-1)!.usage as OpenAI.CompletionUsage & { cost: string };
    const [charge] = await eventually(async () => {
      const charges = await newCharges(gateway, before);
      assert.equal(charges.length, 1);
      return charges;
    });
    assert.equal(usage.cost, formatUsd(charge.amount));
    assert.equal(charge.amount, byHand(usage));
  });
});
