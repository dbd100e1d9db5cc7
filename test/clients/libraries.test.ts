/**
 * The most used TypeScript AI libraries pointed at the gateway over real HTTP, as a new user would:
 * the Vercel AI SDK (`ai` with `@ai-sdk/openai` on /v1/responses, `@ai-sdk/openai-compatible` on
 * /v1/chat/completions, `@ai-sdk/anthropic` on /v1/messages) and LangChain (`ChatOpenAI`,
 * `ChatAnthropic`). Each generates and streams text, runs a tool loop streamed and not, gets
 * structured output where the endpoint has it, and sends an image; each model call is charged
 * exactly its tokens at the route's prices (input 1 USD, output 2 USD per million tokens), no more
 * and no less, once. The upstreams are the protocol simulators (test/simulators/).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ChatAnthropic } from '@langchain/anthropic';
import { tool as langchainTool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, jsonSchema, Output, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { eventually, ledger, newCharges } from '../chat/helpers.ts';
import { routeCost } from '../simulators/chat-e2e.ts';
import type { TestGateway } from '../helpers/gateway.ts';
import { ON_ANTHROPIC, ON_CHAT, ON_RESPONSES, startThreeUpstreams, type ThreeUpstreams } from './three-upstreams.ts';

/** A 1×1 PNG. */
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

let upstreams: ThreeUpstreams;
let gateway: TestGateway;

before(async () => {
  // The libraries drop a tool call's `extra_content`; OpenAI itself keeps nothing there (docs/request-fields.md, "Known gap").
  upstreams = await startThreeUpstreams({ statelessToolCalls: true });
  gateway = upstreams.gateway;
});

after(() => upstreams?.close());

interface Tokens {
  readonly input: number;
  readonly output: number;
}

/**
 * Runs a client call and checks its charges: one per model call, each exactly the tokens that call
 * reported (no cache is involved here), in order.
 */
async function charged<T>(run: () => Promise<T>, tokensOf: (result: T) => readonly Tokens[]): Promise<T> {
  const before = await ledger(gateway);
  const result = await run();
  const calls = tokensOf(result);
  assert.ok(calls.length > 0 && calls.every((call) => call.input > 0 && call.output > 0), `usage reported: ${JSON.stringify(calls)}`);
  const expected = calls.map((call) => routeCost(0, { uncached: call.input, cacheRead: 0, cacheWrite: 0, output: call.output })).sort();
  await eventually(async () => {
    const snapshot = await ledger(gateway);
    assert.equal(snapshot.balance.reserved, 0n);
    const amounts = (await newCharges(gateway, before)).map((charge) => charge.amount).sort();
    assert.deepEqual(amounts, expected);
  });
  return result;
}

/** The tokens of each step of an AI SDK result. */
const stepTokens = (result: { steps: readonly { usage: { inputTokens?: number; outputTokens?: number } }[] }): Tokens[] =>
  result.steps.map((step) => ({ input: step.usage.inputTokens ?? 0, output: step.usage.outputTokens ?? 0 }));

const weather = tool({
  description: 'The weather in a city.',
  inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }),
  execute: async ({ city }) => `Sunny in ${city}`,
});

/** The providers the AI SDK offers for each endpoint, over the same gateway key. */
function aiSdkModels() {
  const openai = createOpenAI({ apiKey: gateway.apiKey, baseURL: `${gateway.baseUrl}/v1` });
  const compatible = createOpenAICompatible({
    name: 'gateway',
    apiKey: gateway.apiKey,
    baseURL: `${gateway.baseUrl}/v1`,
    includeUsage: true,
    supportsStructuredOutputs: true,
  });
  const anthropic = createAnthropic({ apiKey: gateway.apiKey, baseURL: `${gateway.baseUrl}/v1` });
  return [
    { name: '@ai-sdk/openai on /v1/responses', model: openai.responses(ON_RESPONSES), structured: false },
    { name: '@ai-sdk/openai-compatible on /v1/chat/completions', model: compatible.chatModel(ON_CHAT), structured: true },
    { name: '@ai-sdk/anthropic on /v1/messages', model: anthropic.messages(ON_ANTHROPIC), structured: true },
  ] as const;
}

describe('the Vercel AI SDK', () => {
  for (const index of [0, 1, 2]) {
    const label = ['@ai-sdk/openai on /v1/responses', '@ai-sdk/openai-compatible on /v1/chat/completions', '@ai-sdk/anthropic on /v1/messages'][index];

    test(`${label}: generate and stream text`, async () => {
      const { model } = aiSdkModels()[index];
      const generated = await charged(() => generateText({ model, prompt: 'hello there', maxRetries: 0 }), stepTokens);
      assert.match(generated.text, /hello there/);
      const streamed = await charged(async () => {
        const result = streamText({ model, prompt: 'hello again', maxRetries: 0 });
        let text = '';
        for await (const delta of result.textStream) text += delta;
        return { text, steps: await result.steps };
      }, stepTokens);
      assert.match(streamed.text, /hello again/);
    });

    test(`${label}: a tool loop, not streamed then streamed`, async () => {
      const { model } = aiSdkModels()[index];
      const generated = await charged(
        () => generateText({ model, prompt: 'Weather in Paris?', tools: { weather }, stopWhen: stepCountIs(3), maxRetries: 0 }),
        stepTokens,
      );
      assert.equal(generated.steps.length, 2);
      assert.equal(generated.steps[0].toolCalls[0]?.toolName, 'weather');
      assert.match(generated.text, /Tool results: .*Sunny in/);
      const streamed = await charged(async () => {
        const result = streamText({ model, prompt: 'Weather in Rome?', tools: { weather }, stopWhen: stepCountIs(3), maxRetries: 0 });
        let text = '';
        for await (const delta of result.textStream) text += delta;
        return { text, steps: await result.steps };
      }, stepTokens);
      assert.equal(streamed.steps.length, 2);
      assert.match(streamed.text, /Tool results: .*Sunny in/);
    });

    test(`${label}: an image in the prompt`, async () => {
      const { model } = aiSdkModels()[index];
      const result = await charged(
        () =>
          generateText({
            model,
            maxRetries: 0,
            messages: [
              {
                role: 'user',
                content: [
                  { type: 'text', text: 'what is this' },
                  { type: 'image', image: PIXEL, mediaType: 'image/png' },
                ],
              },
            ],
          }),
        stepTokens,
      );
      assert.match(result.text, /what is this/);
    });
  }

  test('structured output on chat completions and messages', async () => {
    const schema = jsonSchema<{ city: string; sunny: boolean }>({
      type: 'object',
      properties: { city: { type: 'string' }, sunny: { type: 'boolean' } },
      required: ['city', 'sunny'],
      additionalProperties: false,
    });
    for (const { model, structured } of aiSdkModels()) {
      if (!structured) continue;
      const result = await charged(
        () => generateText({ model, prompt: 'Weather in Paris as JSON', output: Output.object({ schema }), maxRetries: 0 }),
        stepTokens,
      );
      assert.equal(typeof result.output.city, 'string');
      assert.equal(typeof result.output.sunny, 'boolean');
    }
  });
});

/** The tokens LangChain reports on a message. */
const messageTokens = (message: { usage_metadata?: { input_tokens: number; output_tokens: number } }): Tokens[] => [
  { input: message.usage_metadata?.input_tokens ?? 0, output: message.usage_metadata?.output_tokens ?? 0 },
];

describe('LangChain', () => {
  const weatherTool = langchainTool(async ({ city }: { city: string }) => `Sunny in ${city}`, {
    name: 'weather',
    description: 'The weather in a city.',
    schema: z.object({ city: z.string() }),
  });

  function models() {
    return [
      {
        name: 'ChatOpenAI',
        model: new ChatOpenAI({ model: ON_CHAT, apiKey: gateway.apiKey, configuration: { baseURL: `${gateway.baseUrl}/v1` }, maxRetries: 0 }),
      },
      { name: 'ChatAnthropic', model: new ChatAnthropic({ model: ON_ANTHROPIC, apiKey: gateway.apiKey, anthropicApiUrl: gateway.baseUrl, maxRetries: 0 }) },
    ] as const;
  }

  for (const index of [0, 1]) {
    const name = ['ChatOpenAI', 'ChatAnthropic'][index];

    test(`${name}: invoke and stream`, async () => {
      const { model } = models()[index];
      const answer = await charged(() => model.invoke('hello there'), messageTokens);
      assert.match(String(answer.content), /hello there/);
      const streamed = await charged(async () => {
        let whole: Awaited<ReturnType<typeof model.invoke>> | undefined;
        for await (const chunk of await model.stream('hello again')) whole = whole === undefined ? chunk : whole.concat(chunk);
        assert.ok(whole);
        return whole;
      }, messageTokens);
      assert.match(String(streamed.content), /hello again/);
    });

    test(`${name}: a tool loop, not streamed then streamed`, async () => {
      const { model } = models()[index];
      const withTools = model.bindTools([weatherTool]);
      const question = { role: 'user' as const, content: 'Weather in Paris?' };
      const call = await charged(() => withTools.invoke([question]), messageTokens);
      assert.equal(call.tool_calls?.[0]?.name, 'weather');
      const result = await weatherTool.invoke(call.tool_calls![0]);
      const answer = await charged(() => withTools.invoke([question, call, result]), messageTokens);
      assert.match(String(typeof answer.content === 'string' ? answer.content : JSON.stringify(answer.content)), /Sunny in/);
      const streamedCall = await charged(async () => {
        let whole: Awaited<ReturnType<typeof withTools.invoke>> | undefined;
        for await (const chunk of await withTools.stream([question])) whole = whole === undefined ? chunk : whole.concat(chunk);
        assert.ok(whole);
        return whole;
      }, messageTokens);
      assert.equal(streamedCall.tool_calls?.[0]?.name, 'weather');
    });

    test(`${name}: structured output`, async () => {
      const { model } = models()[index];
      const structured = model.withStructuredOutput(z.object({ city: z.string(), sunny: z.boolean() }), { includeRaw: true });
      const result = await charged(
        () => structured.invoke('Weather in Paris as JSON'),
        (answer) => messageTokens(answer.raw as { usage_metadata?: { input_tokens: number; output_tokens: number } }),
      );
      assert.equal(typeof result.parsed.city, 'string');
    });
  }
});
