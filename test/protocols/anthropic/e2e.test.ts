/**
 * The official `openai` client against the gateway's chat completions endpoint, whose upstream is an
 * Anthropic Messages simulator: the shared scenarios plus what is particular to this protocol.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { formatUsd } from '../../../src/core/money.ts';
import { eventually } from '../../chat/helpers.ts';
import { startGateway, type TestGateway } from '../../helpers/gateway.ts';
import { startAnthropicSimulator, type AnthropicSimulator } from '../../simulators/anthropic.ts';
import {
  assertCharges,
  chatEndToEndSuite,
  FALLBACK_MODEL,
  ledger,
  loggedRequest,
  PRIMARY,
  readChatStream,
  requestIdOf,
  routeCost,
  SINGLE_MODEL,
} from '../../simulators/chat-e2e.ts';
import { costAt as messagesCostAt, messagesEndToEndSuite } from '../../simulators/messages-e2e.ts';
import { responsesEndToEndSuite } from '../../simulators/responses-e2e.ts';
import { SEARCH_PER_QUERY, SEARCH_PER_REQUEST, webSearchConfig } from '../../simulators/gateway-config.ts';
import { assertRefusedBeforeUpstream } from '../helpers.ts';

const context = chatEndToEndSuite({
  kind: 'anthropic',
  startSimulator: (apiKey) => startAnthropicSimulator({ apiKey }),
  identify: (request) => ({ model: request.body?.model, credential: request.headers['x-api-key'] }),
  capabilities: {
    cachedTokens: (simulator, tokens) => {
      simulator.options.cachedTokens = tokens;
    },
  },
});

const messagesContext = messagesEndToEndSuite({
  kind: 'anthropic',
  startSimulator: (apiKey) => startAnthropicSimulator({ apiKey }),
  signsThinking: true,
});

responsesEndToEndSuite({
  kind: 'anthropic',
  startSimulator: (apiKey) => startAnthropicSimulator({ apiKey }),
});

/** Chat bodies with the gateway's own request options, which the SDK's types do not know. */
type WithGatewayOptions = OpenAI.ChatCompletionCreateParamsNonStreaming & { gateway?: { cache?: 'on' | 'off'; cache_ttl?: '5m' | '1h' } };

describe('anthropic upstream specifics', () => {
  test('request fields reach the upstream under their Messages names', async () => {
    const { client, primary } = context();
    await client.chat.completions.create({
      model: SINGLE_MODEL,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: 'Be kind.' },
        { role: 'user', content: 'hi' },
      ],
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
      {
        system: [
          { type: 'text', text: 'Be brief.' },
          { type: 'text', text: 'Be kind.' },
        ],
        max: 100,
        stop: ['END'],
        temperature: 0.5,
        topP: 0.9,
        metadata: { user_id: 'end-user-1' },
      },
    );
  });

  for (const [name, fields] of [
    ['seed', { seed: 1 }],
    ['presence_penalty', { presence_penalty: 0 }],
    ['logprobs', { logprobs: false }],
  ] as const) {
    test(`explicit ${name} cannot be expressed: 400 unsupported_parameter before any upstream call`, () =>
      assertRefusedBeforeUpstream(context(), fields, [name]));
  }

  // The chat dialect itself refuses top_logprobs without logprobs: true, so the pair is what reaches policy.
  test('logprobs with top_logprobs cannot be expressed: 400 unsupported_parameter naming one of them, nothing sent upstream', () =>
    assertRefusedBeforeUpstream(context(), { logprobs: true, top_logprobs: 2 }, ['logprobs', 'top_logprobs']));

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

  test("tool loop with thinking: the turn's thinking rides the tool call's extra_content and is replayed first", async () => {
    const { client, primary } = context();
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await client.chat.completions.create({ model: SINGLE_MODEL, messages, tools, reasoning_effort: 'low' });
    const message = first.choices[0].message as OpenAI.ChatCompletionMessage & {
      tool_calls: (OpenAI.ChatCompletionMessageToolCall & { extra_content?: { anthropic?: { signature?: string } } })[];
    };
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
        .create({
          model: SINGLE_MODEL,
          messages: [
            { role: 'system', content: system },
            { role: 'user', content },
          ],
          gateway: { cache: 'on', cache_ttl: '1h' },
        } as WithGatewayOptions)
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

  for (const [ttl, stream] of [
    ['1h', false],
    ['1h', true],
    ['5m', false],
  ] as const) {
    test(`cache writes for ${ttl === '1h' ? 'an hour' : '5 minutes'}${stream ? ', streamed' : ''}: charged exactly at the route's ${ttl} write rate, the split in the request log`, async () => {
      const { client, gateway } = context();
      const before = await ledger(gateway);
      // A prefix no other test wrote, so that this call writes all of it.
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        { role: 'system', content: `A long instruction written for ${ttl}${stream ? ' in a stream' : ''}. `.repeat(30) },
        { role: 'user', content: 'a question' },
      ];
      const gatewayOptions = { gateway: { cache: 'on', cache_ttl: ttl } };
      let usage: OpenAI.CompletionUsage;
      let requestId: string;
      if (stream) {
        const body = { model: SINGLE_MODEL, messages, stream: true, stream_options: { include_usage: true }, ...gatewayOptions };
        const { data, response } = await client.chat.completions.create(body as OpenAI.ChatCompletionCreateParamsStreaming).withResponse();
        usage = (await readChatStream(data)).usage!;
        requestId = requestIdOf(response);
      } else {
        const { data, response } = await client.chat.completions
          .create({ model: SINGLE_MODEL, messages, ...gatewayOptions } as WithGatewayOptions)
          .withResponse();
        usage = data.usage!;
        requestId = requestIdOf(response);
      }
      const written = (usage.prompt_tokens_details as { cache_creation_tokens?: number }).cache_creation_tokens ?? 0;
      const read = usage.prompt_tokens_details?.cached_tokens ?? 0;
      assert.ok(written > 0, 'the prefix is written');
      // Every breakpoint has the request's lifetime, so every write is of that lifetime.
      const split = ttl === '1h' ? { cacheWrite: 0, cacheWrite1h: written } : { cacheWrite: written, cacheWrite1h: 0 };
      const expected = routeCost(0, { uncached: usage.prompt_tokens - read - written, cacheRead: read, ...split, output: usage.completion_tokens });
      assert.equal(await assertCharges(gateway, before, 1, requestId), expected);
      const row = await loggedRequest(gateway, requestId);
      assert.deepEqual([row.cacheWriteTokens, row.cacheWrite1hTokens, row.cost], [written, split.cacheWrite1h, expected]);
    });
  }
});

type WebSearchExtension = { x_gateway?: { web_search: { queries: string[]; search_entry_point_html: string; billed_queries: number } } };

describe('anthropic web search (the web_search_20250305 server tool) → x_gateway.web_search', () => {
  const PER_QUERY = SEARCH_PER_QUERY;
  const PER_REQUEST = SEARCH_PER_REQUEST;
  const SEARCH_PRICE = 0.01;
  let sim: AnthropicSimulator;
  let gateway: TestGateway;
  let client: OpenAI;

  before(async () => {
    // The model tries seven searches; the gateway's max_uses lets five run, the sixth is refused.
    sim = await startAnthropicSimulator({ apiKey: 'a-key', searchQueries: 7 });
    const config = webSearchConfig({ id: 'anthropic', kind: 'anthropic', baseUrl: sim.baseUrl, apiKeyEnv: 'ANTHROPIC_KEY' }, String(SEARCH_PRICE));
    gateway = await startGateway({ config, env: { ANTHROPIC_KEY: 'a-key' }, creditUsd: '10' });
    client = new OpenAI({ apiKey: gateway.apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gateway?.close();
    await sim?.close();
  });

  const QUESTION = 'Who won Euro 2024';
  const RAN = [QUESTION, `${QUESTION} 2`, `${QUESTION} 3`, `${QUESTION} 4`, `${QUESTION} 5`];
  const body = (model: string) =>
    ({ model, messages: [{ role: 'user', content: QUESTION }], tools: [{ type: 'web_search' }] }) as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
  const owner = () => ({ kind: 'account', id: gateway.account.id }) as const;
  const knownEntries = async () => new Set((await gateway.store.listEntries(owner())).map((entry) => entry.id));

  for (const [model, billed] of [
    [PER_QUERY, 5],
    [PER_REQUEST, 1],
  ] as const) {
    test(`${model === PER_QUERY ? 'per query' : 'per request'}: the server tool upstream, the queries that ran, billed_queries ${billed}, the citation, a charge equal to the cost header`, async () => {
      const known = await knownEntries();
      const { data, response } = await client.chat.completions.create(body(model)).withResponse();
      assert.deepEqual(sim.requests.at(-1)!.body.tools, [{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }]);
      assert.deepEqual((data as WebSearchExtension).x_gateway?.web_search, { queries: RAN, search_entry_point_html: '', billed_queries: billed });
      const answer = `Echo: ${QUESTION}`;
      assert.equal(data.choices[0].message.content, answer);
      assert.deepEqual(data.choices[0].message.annotations, [
        {
          type: 'url_citation',
          url_citation: { url: `https://example.com/${sim.requests.length}/1`, title: 'Result 1', start_index: 0, end_index: answer.length },
        },
      ]);
      const cost = response.headers.get('x-gateway-cost-usd');
      assert.equal(formatUsd(await waitForCharge(gateway, owner(), known)), cost);
      // The search units alone are billed units × the search price; tokens come on top.
      assert.ok(Number(cost) > billed * SEARCH_PRICE && Number(cost) < billed * SEARCH_PRICE + 0.01, `cost ${cost}`);
    });
  }

  test("streamed, per query: x_gateway.web_search on the finish chunk, the usage chunk's cost equal to the ledger charge", async () => {
    const known = await knownEntries();
    const stream = await client.chat.completions.create({ ...body(PER_QUERY), stream: true, stream_options: { include_usage: true } });
    let webSearch: unknown;
    let cost: string | undefined;
    let text = '';
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      webSearch = (chunk as WebSearchExtension).x_gateway?.web_search ?? webSearch;
      cost = (chunk.usage as { cost?: string } | null | undefined)?.cost ?? cost;
    }
    assert.equal(sim.requests.at(-1)!.body.stream, true);
    assert.equal(text, `Echo: ${QUESTION}`);
    assert.deepEqual(webSearch, { queries: RAN, search_entry_point_html: '', billed_queries: 5 });
    assert.equal(formatUsd(await waitForCharge(gateway, owner(), known)), cost);
    assert.ok(Number(cost) > 5 * SEARCH_PRICE && Number(cost) < 5 * SEARCH_PRICE + 0.01, `cost ${cost}`);
  });
});

async function waitForCharge(
  gateway: ReturnType<typeof context>['gateway'],
  owner: { kind: 'account'; id: string },
  known: ReadonlySet<string>,
): Promise<bigint> {
  return eventually(async () => {
    const charge = (await gateway.store.listEntries(owner)).find((entry) => entry.kind === 'charge' && !known.has(entry.id));
    assert.ok(charge, 'a charge is recorded');
    return charge.amount;
  });
}

describe('messages over anthropic: as faithful as a pass-through', () => {
  const tool: Anthropic.Tool = {
    name: 'get_weather',
    description: 'The weather in a city',
    input_schema: { type: 'object', properties: { city: { type: 'string' } } },
  };
  const body = (question: string): Anthropic.MessageCreateParamsNonStreaming => ({
    model: SINGLE_MODEL,
    max_tokens: 256,
    system: [
      { type: 'text', text: 'You are terse.' },
      { type: 'text', text: 'Instructions shared by every conversation, long enough to be worth caching.', cache_control: { type: 'ephemeral', ttl: '1h' } },
    ],
    tools: [{ ...tool, cache_control: { type: 'ephemeral' } }],
    tool_choice: { type: 'none' },
    stop_sequences: ['END', 'STOP'],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'A first part.' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'text', text: 'A second part.', cache_control: { type: 'ephemeral', ttl: '5m' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Noted.', cache_control: { type: 'ephemeral' } }] },
      { role: 'user', content: question },
    ],
  });

  test('blocks keep their order and cache_control (with its ttl) in place; stop sequences pass; cache writes then reads, charged exactly', async () => {
    const { client, primary, gateway } = messagesContext();
    const beforeFirst = await ledger(gateway);
    const { data: first, response: firstResponse } = await client.messages.create(body('And now?')).withResponse();
    const sent = primary!.requests.at(-1)!.body;
    const expected = body('And now?');
    assert.deepEqual(sent.system, expected.system);
    assert.deepEqual(sent.tools, expected.tools);
    assert.deepEqual(sent.stop_sequences, ['END', 'STOP']);
    assert.deepEqual(sent.messages, [expected.messages[0], expected.messages[1], { role: 'user', content: [{ type: 'text', text: 'And now?' }] }]);
    assert.ok(first.usage.cache_creation_input_tokens! > 0, 'the marked prefixes are written');
    // The system prefix is marked for an hour, what follows it for five minutes: both parts are reported.
    const split = first.usage.cache_creation!;
    assert.ok(split.ephemeral_1h_input_tokens > 0 && split.ephemeral_5m_input_tokens > 0, JSON.stringify(split));
    assert.equal(split.ephemeral_5m_input_tokens + split.ephemeral_1h_input_tokens, first.usage.cache_creation_input_tokens);
    // Each part of the writes at its own rate.
    assert.equal(await assertCharges(gateway, beforeFirst, 1, requestIdOf(firstResponse)), messagesCostAt(PRIMARY, first.usage));

    const before = await ledger(gateway);
    const { data: second, response } = await client.messages.create(body('And then?')).withResponse();
    assert.ok(second.usage.cache_read_input_tokens! > 0, 'the same prefixes are read back');
    const charged = await assertCharges(gateway, before, 1, requestIdOf(response));
    assert.equal(response.headers.get('x-gateway-cost-usd'), formatUsd(charged));
    assert.equal(charged, messagesCostAt(PRIMARY, second.usage));
  });

  for (const streamed of [false, true]) {
    test(`the upstream's stop reasons come through${streamed ? ', streamed' : ''}: pause_turn and refusal, a matched stop sequence with its text`, async () => {
      const { client, primary } = messagesContext();
      try {
        for (const [reason, sequence] of [
          ['pause_turn', null],
          ['refusal', null],
          ['stop_sequence', 'END'],
        ] as const) {
          primary!.options.stop = { reason, sequence };
          const request = { model: SINGLE_MODEL, max_tokens: 256, messages: [{ role: 'user' as const, content: 'hi' }] };
          const message = streamed ? await client.messages.stream(request).finalMessage() : await client.messages.create(request);
          assert.deepEqual([message.stop_reason, message.stop_sequence], [reason, sequence]);
        }
      } finally {
        primary!.options.stop = undefined;
      }
    });
  }
});
