/**
 * The official `openai` client against the gateway's chat completions endpoint, whose upstream is
 * an OpenAI Responses simulator: the shared scenarios, chat rule 3, the Responses mapping, reasoning
 * items kept across a chat tool loop through `extra_content` (docs/chat-completions.md, rule 1),
 * and web search billed per query or per request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { formatUsd, usdToPicos } from '../../../src/core/money.ts';
import { picosPerToken } from '../../chat/helpers.ts';
import { startGateway, type TestGateway } from '../../helpers/gateway.ts';
import { assertCharges, chatEndToEndSuite, ledger, readChatStream, SINGLE_MODEL } from '../../simulators/chat-e2e.ts';
import { messagesEndToEndSuite } from '../../simulators/messages-e2e.ts';
import { responsesEndToEndSuite } from '../../simulators/responses-e2e.ts';
import { SEARCH_PER_QUERY, SEARCH_PER_REQUEST, webSearchConfig } from '../../simulators/gateway-config.ts';
import { SEARCH_RESULT, startOpenAIResponsesSimulator, type OpenAIResponsesSimulator } from '../../simulators/openai-responses.ts';
import { assertRefusedBeforeUpstream } from '../helpers.ts';

const context = chatEndToEndSuite({
  kind: 'openai-responses',
  startSimulator: (apiKey) => startOpenAIResponsesSimulator({ apiKey, reasoningSummary: true }),
  capabilities: {
    cachedTokens: (simulator, tokens) => {
      simulator.options.cachedTokens = tokens;
    },
  },
});

messagesEndToEndSuite({
  kind: 'openai-responses',
  startSimulator: (apiKey) => startOpenAIResponsesSimulator({ apiKey, reasoningSummary: true }),
  budgetThinking: false,
});

responsesEndToEndSuite({
  kind: 'openai-responses',
  startSimulator: (apiKey) => startOpenAIResponsesSimulator({ apiKey, reasoningSummary: true }),
});

type ToolCallWithExtra = OpenAI.ChatCompletionMessageFunctionToolCall & { extra_content?: { openai?: { encrypted_content?: string } } };
type WebSearchExtension = { x_gateway?: { web_search: { queries: string[]; search_entry_point_html: string; billed_queries: number } } };

const tools: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
];

/** The reasoning item the simulator returned last, exactly as it returned it. */
function lastReasoningItem(simulator: OpenAIResponsesSimulator) {
  const item = [...simulator.reasoningItems.values()].at(-1);
  assert.ok(item?.encrypted_content, 'the upstream returned an encrypted reasoning item');
  return item;
}

describe('openai responses upstream specifics', () => {
  // Spec chat rule 3: explicit values are rejected before any upstream call, `logprobs: false` included.
  // top_logprobs needs logprobs: true (chat's own rule), so that row may be reported under either name.
  const rejected: [string, Record<string, unknown>, readonly string[]][] = [
    ['stop', { stop: ['END'] }, ['stop']],
    ['seed', { seed: 1 }, ['seed']],
    ['presence_penalty', { presence_penalty: 0 }, ['presence_penalty']],
    ['frequency_penalty', { frequency_penalty: 0.5 }, ['frequency_penalty']],
    ['logprobs', { logprobs: false }, ['logprobs']],
    ['top_logprobs', { logprobs: true, top_logprobs: 2 }, ['logprobs', 'top_logprobs']],
  ];
  for (const [name, fields, params] of rejected) {
    test(`rule 3: explicit ${name} → 400 unsupported_parameter naming it`, () => assertRefusedBeforeUpstream(context(), fields, params));
  }

  test('system → instructions, max tokens → max_output_tokens, effort → reasoning, length stop', async () => {
    const { client, primary } = context();
    const completion = await client.chat.completions.create({
      model: SINGLE_MODEL,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'one two three four five' },
      ],
      max_completion_tokens: 8,
      reasoning_effort: 'low',
    });
    const body = primary.requests.at(-1)!.body;
    assert.deepEqual(
      { instructions: body.instructions, max: body.max_output_tokens, reasoning: body.reasoning },
      { instructions: 'Be brief.', max: 8, reasoning: { effort: 'low' } },
    );
    assert.equal(completion.choices[0].finish_reason, 'length');
    assert.ok((completion.usage?.completion_tokens_details?.reasoning_tokens ?? 0) > 0);
  });

  test('tool loop with reasoning: the encrypted reasoning item reaches the client as extra_content and goes back unchanged right before its function_call', async () => {
    const { client, primary } = context();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await client.chat.completions.create({ model: SINGLE_MODEL, messages, tools, reasoning_effort: 'low' });
    assert.deepEqual(primary.requests.at(-1)!.body.include, ['reasoning.encrypted_content']);
    const issued = lastReasoningItem(primary);
    const call = first.choices[0].message.tool_calls![0] as ToolCallWithExtra;
    assert.deepEqual(JSON.parse(call.extra_content?.openai?.encrypted_content ?? 'null'), [issued]);
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '18C' });
    const second = await client.chat.completions.create({ model: SINGLE_MODEL, messages, tools, reasoning_effort: 'low' });
    assert.equal(second.choices[0].message.content, 'Tool results: 18C');
    assert.deepEqual(primary.requests.at(-1)!.body.input.slice(1), [
      issued,
      { type: 'function_call', call_id: call.id, name: 'get_weather', arguments: '{"city":"sample"}' },
      { type: 'function_call_output', call_id: call.id, output: '18C' },
    ]);
  });

  test('streamed tool loop with reasoning: the reasoning item arrives on the tool call delta and replays the same way', async () => {
    const { client, primary } = context();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Oslo?' }];
    const stream = client.chat.completions.stream({ model: SINGLE_MODEL, messages, tools, reasoning_effort: 'low' });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    stream.on('chunk', (chunk) => chunks.push(chunk));
    const completion = await stream.finalChatCompletion();
    const issued = lastReasoningItem(primary);
    const streamedCall = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? [])[0] as { extra_content?: ToolCallWithExtra['extra_content'] };
    assert.deepEqual(JSON.parse(streamedCall.extra_content?.openai?.encrypted_content ?? 'null'), [issued]);
    const call = completion.choices[0].message.tool_calls![0];
    messages.push(
      { role: 'assistant', content: null, tool_calls: [{ ...call, extra_content: streamedCall.extra_content } as ToolCallWithExtra] },
      { role: 'tool', tool_call_id: call.id, content: 'snow' },
    );
    const second = await client.chat.completions.create({ model: SINGLE_MODEL, messages, tools, reasoning_effort: 'low' });
    assert.equal(second.choices[0].message.content, 'Tool results: snow');
    assert.deepEqual(primary.requests.at(-1)!.body.input[1], issued);
  });
});

describe('openai responses web search → x_gateway.web_search', () => {
  const PER_QUERY = SEARCH_PER_QUERY;
  const PER_REQUEST = SEARCH_PER_REQUEST;
  const SEARCH_PRICE_USD = '0.035';
  const QUESTION = 'Who won Euro 2024';
  let sim: OpenAIResponsesSimulator;
  let gateway: TestGateway;
  let client: OpenAI;

  before(async () => {
    sim = await startOpenAIResponsesSimulator({ apiKey: 'sk-search', searchQueries: 2 });
    const config = webSearchConfig({ id: 'openai', kind: 'openai-responses', baseUrl: sim.baseUrl, apiKeyEnv: 'OPENAI_KEY' }, SEARCH_PRICE_USD);
    gateway = await startGateway({ config, env: { OPENAI_KEY: 'sk-search' }, creditUsd: '10' });
    client = new OpenAI({ apiKey: gateway.apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gateway?.close();
    await sim?.close();
  });

  const searchRequest = { messages: [{ role: 'user', content: QUESTION }], tools: [{ type: 'web_search' }] };

  /** By hand, at the route's prices: input 1 $/M, output 2 $/M, each search unit 0.035 $. */
  const expectedCost = (usage: OpenAI.CompletionUsage, units: number) =>
    BigInt(usage.prompt_tokens) * picosPerToken('1') + BigInt(usage.completion_tokens) * picosPerToken('2') + BigInt(units) * usdToPicos(SEARCH_PRICE_USD);

  for (const [model, billed] of [
    [PER_QUERY, 2],
    [PER_REQUEST, 1],
  ] as const) {
    test(`${model === PER_QUERY ? 'per query' : 'per request'}: the queries, billed_queries ${billed}, url citations, a charge equal to the cost header and to the route's prices`, async () => {
      const before = await ledger(gateway);
      const { data, response } = await client.chat.completions
        .create({ model, ...searchRequest } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .withResponse();
      assert.deepEqual(sim.requests.at(-1)!.body.tools, [{ type: 'web_search' }]);
      assert.deepEqual((data as WebSearchExtension).x_gateway?.web_search, {
        queries: [QUESTION, `${QUESTION} 2`],
        search_entry_point_html: '',
        billed_queries: billed,
      });
      const text = `Echo: ${QUESTION}`;
      assert.equal(data.choices[0].message.content, text);
      assert.deepEqual(data.choices[0].message.annotations, [
        { type: 'url_citation', url_citation: { url: SEARCH_RESULT.url, title: SEARCH_RESULT.title, start_index: 0, end_index: text.length } },
      ]);
      const charged = await assertCharges(gateway, before, 1);
      assert.equal(response.headers.get('x-gateway-cost-usd'), formatUsd(charged));
      assert.equal(charged, expectedCost(data.usage!, billed));
    });
  }

  test('streamed, per query: x_gateway.web_search on the finish chunk, the usage cost equal to the charge', async () => {
    const before = await ledger(gateway);
    const stream = await client.chat.completions.create({
      model: PER_QUERY,
      ...searchRequest,
      stream: true,
      stream_options: { include_usage: true },
    } as unknown as OpenAI.ChatCompletionCreateParamsStreaming);
    const read = await readChatStream(stream);
    assert.equal(read.error, undefined);
    assert.equal(read.text, `Echo: ${QUESTION}`);
    const finishChunk = read.chunks.find((chunk) => chunk.choices[0]?.finish_reason) as (OpenAI.ChatCompletionChunk & WebSearchExtension) | undefined;
    assert.deepEqual(finishChunk?.x_gateway?.web_search, { queries: [QUESTION, `${QUESTION} 2`], search_entry_point_html: '', billed_queries: 2 });
    const charged = await assertCharges(gateway, before, 1);
    assert.equal(read.usage?.cost, formatUsd(charged));
    assert.equal(charged, expectedCost(read.usage!, 2));
  });
});
