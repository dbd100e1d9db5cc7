/**
 * The official `openai` client against the gateway's chat completions endpoint, whose upstream is a
 * Gemini simulator: the shared scenarios (implicit cache hits included), thought-signature replay
 * through `extra_content` (docs/chat-completions.md, rule 1), and web search billed per query or
 * per request, plain and streamed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { formatUsd } from '../../../src/core/money.ts';
import { startGateway, type TestGateway } from '../../helpers/gateway.ts';
import { assertCharges, chatEndToEndSuite, ledger, readChatStream, requestIdOf, SINGLE_MODEL } from '../../simulators/chat-e2e.ts';
import { messagesEndToEndSuite } from '../../simulators/messages-e2e.ts';
import { responsesEndToEndSuite } from '../../simulators/responses-e2e.ts';
import { SEARCH_PER_QUERY, SEARCH_PER_REQUEST, webSearchConfig } from '../../simulators/gateway-config.ts';
import { startGeminiSimulator, type GeminiSimulator } from '../../simulators/gemini.ts';
import { assertRefusedBeforeUpstream } from '../helpers.ts';

const context = chatEndToEndSuite({
  kind: 'gemini',
  startSimulator: (apiKey) => startGeminiSimulator({ apiKey }),
  identify: (request) => ({ model: /^\/v1beta\/models\/([^:]+):/.exec(request.path)?.[1], credential: request.headers['x-goog-api-key'] }),
  capabilities: {
    cachedTokens: (simulator, tokens) => {
      simulator.options.cachedTokens = tokens;
    },
  },
});

messagesEndToEndSuite({
  kind: 'gemini',
  startSimulator: (apiKey) => startGeminiSimulator({ apiKey }),
});

responsesEndToEndSuite({
  kind: 'gemini',
  startSimulator: (apiKey) => startGeminiSimulator({ apiKey }),
});

type ToolCallWithExtra = OpenAI.ChatCompletionMessageFunctionToolCall & { extra_content?: { google?: { thought_signature?: string } } };
type WebSearchExtension = { x_gateway?: { web_search: { queries: string[]; search_entry_point_html: string; billed_queries: number } } };

const tools: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
];

describe('gemini upstream specifics', () => {
  test('an extra_body option the route allows reaches the upstream in generationConfig', async () => {
    const { client, primary } = context();
    await client.chat.completions.create({
      model: SINGLE_MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.5,
      extra_body: { cloud_a: { topK: 7 } },
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const config = primary.requests.at(-1)!.body.generationConfig;
    assert.equal(config.topK, 7);
    assert.equal(config.temperature, 0.5);
  });

  test('tool loop: the thought signature reaches the client as extra_content and goes back on its functionCall part', async () => {
    const { client, primary } = context();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await client.chat.completions.create({ model: SINGLE_MODEL, messages, tools });
    const call = first.choices[0].message.tool_calls![0] as ToolCallWithExtra;
    assert.equal(call.id, 'call_0_get_weather');
    const signature = call.extra_content?.google?.thought_signature;
    assert.ok(signature, 'extra_content.google.thought_signature is present');
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '18C' });
    const second = await client.chat.completions.create({ model: SINGLE_MODEL, messages, tools });
    assert.equal(second.choices[0].message.content, 'Tool results: 18C');
    const model = primary.requests.at(-1)!.body.contents[1];
    assert.deepEqual(model, { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'sample' } }, thoughtSignature: signature }] });
  });

  test('a client that strips extra_content gets Gemini\'s 400 "missing a thought_signature"', async () => {
    const { client } = context();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Rome?' }];
    const first = await client.chat.completions.create({ model: SINGLE_MODEL, messages, tools });
    const { extra_content: _dropped, ...call } = first.choices[0].message.tool_calls![0] as ToolCallWithExtra;
    messages.push({ role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: '20C' });
    await assert.rejects(
      client.chat.completions.create({ model: SINGLE_MODEL, messages, tools }),
      (error: unknown) => error instanceof OpenAI.APIError && error.status === 400 && /missing a `thought_signature`/.test(error.message),
    );
  });

  test('streamed: the signature arrives on the tool call delta and replays the same way', async () => {
    const { client } = context();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Oslo?' }];
    const stream = client.chat.completions.stream({ model: SINGLE_MODEL, messages, tools });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    stream.on('chunk', (chunk) => chunks.push(chunk));
    const completion = await stream.finalChatCompletion();
    const streamedCall = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? [])[0] as {
      id?: string;
      extra_content?: ToolCallWithExtra['extra_content'];
    };
    assert.ok(streamedCall.extra_content?.google?.thought_signature);
    const call = completion.choices[0].message.tool_calls![0];
    messages.push(
      { role: 'assistant', content: null, tool_calls: [{ ...call, extra_content: streamedCall.extra_content } as ToolCallWithExtra] },
      { role: 'tool', tool_call_id: call.id, content: 'snow' },
    );
    const second = await client.chat.completions.create({ model: SINGLE_MODEL, messages, tools });
    assert.equal(second.choices[0].message.content, 'Tool results: snow');
  });

  test('reasoning_effort → thinkingConfig budgets; none → 0', async () => {
    const { client, primary } = context();
    await client.chat.completions.create({ model: SINGLE_MODEL, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'high' });
    assert.deepEqual(primary.requests.at(-1)!.body.generationConfig.thinkingConfig, { thinkingBudget: 24576, includeThoughts: true });
    await client.chat.completions.create({ model: SINGLE_MODEL, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'none' });
    assert.deepEqual(primary.requests.at(-1)!.body.generationConfig.thinkingConfig, { thinkingBudget: 0 });
  });

  for (const [name, fields, param] of [
    ['user', { user: 'end-user-1' }, 'user'],
    ['logprobs', { logprobs: true }, 'logprobs'],
    ['parallel_tool_calls=false', { tools, parallel_tool_calls: false }, 'parallel_tool_calls'],
  ] as const) {
    test(`${name} cannot be expressed: 400 unsupported_parameter, nothing sent upstream`, () => assertRefusedBeforeUpstream(context(), fields, [param]));
  }
});

describe('gemini web search (grounding) → x_gateway.web_search', () => {
  const PER_QUERY = SEARCH_PER_QUERY;
  const PER_REQUEST = SEARCH_PER_REQUEST;
  let sim: GeminiSimulator;
  let gateway: TestGateway;
  let client: OpenAI;

  before(async () => {
    sim = await startGeminiSimulator({ apiKey: 'g-key', searchQueries: 3 });
    const config = webSearchConfig({ id: 'google', kind: 'gemini', baseUrl: sim.baseUrl, apiKeyEnv: 'GEMINI_KEY' }, '0.035');
    gateway = await startGateway({ config, env: { GEMINI_KEY: 'g-key' }, creditUsd: '10' });
    client = new OpenAI({ apiKey: gateway.apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gateway?.close();
    await sim?.close();
  });

  const question: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Who won Euro 2024' }];
  const webSearchTool = [{ type: 'web_search' }] as unknown as OpenAI.ChatCompletionTool[];
  const search = (model: string) => client.chat.completions.create({ model, messages: question, tools: webSearchTool }).withResponse();

  /** By hand: input (search results fed back included) at 1 $/M, output at 2 $/M, each billed search unit at 0.035 $. */
  const searchCost = (usage: OpenAI.CompletionUsage, billed: number) =>
    BigInt(usage.prompt_tokens) * 1_000_000n + BigInt(usage.completion_tokens) * 2_000_000n + BigInt(billed) * 35_000_000_000n;

  function assertWebSearch(webSearch: NonNullable<WebSearchExtension['x_gateway']>['web_search'] | undefined, billed: number) {
    assert.deepEqual(sim.requests.at(-1)!.body.tools, [{ googleSearch: {} }]);
    assert.deepEqual(webSearch?.queries, ['Who won Euro 2024', 'Who won Euro 2024 2', 'Who won Euro 2024 3']);
    assert.match(webSearch?.search_entry_point_html ?? '', /^<style>.*<div class="chip">Who won Euro 2024<\/div>$/);
    assert.equal(webSearch?.billed_queries, billed);
  }

  for (const [model, billed] of [
    [PER_QUERY, 3],
    [PER_REQUEST, 1],
  ] as const) {
    const billing = model === PER_QUERY ? 'per query' : 'per request';
    test(`${billing}: queries, the entry point HTML, billed_queries ${billed}, a charge equal to the cost header`, async () => {
      const before = await ledger(gateway);
      const { data, response } = await search(model);
      assertWebSearch((data as WebSearchExtension).x_gateway?.web_search, billed);
      const charged = await assertCharges(gateway, before, 1, requestIdOf(response));
      assert.equal(response.headers.get('x-gateway-cost-usd'), formatUsd(charged));
      assert.equal(charged, searchCost(data.usage!, billed));
    });

    test(`${billing}, streamed: the finish chunk carries the web search, the usage cost is the charge`, async () => {
      const before = await ledger(gateway);
      const { data: stream, response } = await client.chat.completions
        .create({ model, messages: question, tools: webSearchTool, stream: true, stream_options: { include_usage: true } })
        .withResponse();
      const read = await readChatStream(stream);
      assert.equal(read.error, undefined);
      assert.equal(read.text, 'Echo: Who won Euro 2024');
      const finishing = read.chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
      assert.equal(finishing.length, 1);
      assertWebSearch((finishing[0] as WebSearchExtension).x_gateway?.web_search, billed);
      const annotations = read.chunks.flatMap(
        (chunk) => (chunk.choices[0]?.delta as { annotations?: { url_citation: { url: string; end_index?: number } }[] } | undefined)?.annotations ?? [],
      );
      assert.deepEqual(
        annotations.map(({ url_citation: citation }) => [citation.url, citation.end_index]),
        [['https://vertexaisearch.cloud.google.com/grounding-api-redirect/sim', read.text.length]],
      );
      const charged = await assertCharges(gateway, before, 1, requestIdOf(response));
      assert.equal(read.usage?.cost, formatUsd(charged));
      assert.equal(charged, searchCost(read.usage!, billed));
    });
  }
});
