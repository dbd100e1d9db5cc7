/**
 * Provider streams that reproduce real ones event for event, and whole answers (test/clients/recordings/,
 * each naming its source — a stream in its first comment line, a body in the table below: a
 * provider's documented example or a recording an open-source SDK keeps as a test fixture),
 * replayed as the upstream answer and read by every client dialect through its official SDK,
 * streamed with its helper or whole: text, tool calls (arguments split mid-string, no arguments),
 * reasoning with its signature or encrypted content, refusals, usage corrected late, a repeated
 * opening event and a nested error. Each request is charged exactly the usage the recording reports
 * (input 1 USD, output 2 USD per million tokens), or nothing when the stream fails before its answer.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { eventually, ledger, newCharges } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { loggedRequest, routeCost } from '../simulators/chat-e2e.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import { startReplayUpstream, type ReplayUpstream } from '../simulators/replay.ts';

type Protocol = 'anthropic' | 'openai-responses' | 'openai' | 'gemini';

/** What a client must read from a recording, whatever its dialect. */
interface Expected {
  readonly text?: RegExp;
  readonly toolCall?: { readonly name: string; readonly arguments: Record<string, unknown> };
  readonly reasoning?: RegExp;
  readonly refusal?: boolean;
  /** The usage the recording reports last, which is what is charged. */
  readonly usage?: { readonly input: number; readonly output: number };
  /** Counts of the provider's own usage object, as the request log row keeps it. */
  readonly reported?: Readonly<Record<string, number>>;
  /** A stream that fails before its answer: the status the client gets, nothing charged. */
  readonly failure?: { readonly status: number; readonly message: RegExp };
}

const RECORDINGS: readonly { readonly file: string; readonly protocol: Protocol; readonly expected: Expected }[] = [
  {
    file: 'anthropic-tool-split.sse',
    protocol: 'anthropic',
    expected: {
      text: /Let me check the weather\./,
      toolCall: { name: 'get_weather', arguments: { location: 'San Francisco, CA', unit: 'fahrenheit' } },
      usage: { input: 472, output: 89 },
      reported: { input_tokens: 472, output_tokens: 89 },
    },
  },
  {
    file: 'anthropic-thinking.sse',
    protocol: 'anthropic',
    expected: { text: /12,231/, reasoning: /10800 \+ 1431/, usage: { input: 36, output: 61 }, reported: { input_tokens: 36, output_tokens: 61 } },
  },
  {
    file: 'anthropic-refusal.sse',
    protocol: 'anthropic',
    expected: { refusal: true, usage: { input: 18, output: 5 }, reported: { input_tokens: 18, output_tokens: 5 } },
  },
  {
    file: 'anthropic-tool-no-args.sse',
    protocol: 'anthropic',
    expected: {
      text: /refresh the list for you\./,
      toolCall: { name: 'refresh_list', arguments: {} },
      usage: { input: 565, output: 48 },
      reported: { input_tokens: 565, output_tokens: 48 },
    },
  },
  {
    file: 'anthropic-late-usage.sse',
    protocol: 'anthropic',
    expected: { text: /^pong$/, usage: { input: 61, output: 2 }, reported: { input_tokens: 61, output_tokens: 2 } },
  },
  { file: 'anthropic-duplicate-start.sse', protocol: 'anthropic', expected: { failure: { status: 502, message: /second message_start/ } } },
  {
    file: 'responses-reasoning-tool.sse',
    protocol: 'openai-responses',
    expected: {
      reasoning: /Calculating step by step/,
      toolCall: { name: 'calculator', arguments: { a: 12, b: 7, op: 'add' } },
      usage: { input: 98, output: 164 },
      reported: { input_tokens: 98, output_tokens: 164, total_tokens: 262 },
    },
  },
  { file: 'responses-quota-error.sse', protocol: 'openai-responses', expected: { failure: { status: 503, message: /exceeded your current quota/ } } },
  {
    file: 'chat-tool-split.sse',
    protocol: 'openai',
    expected: {
      toolCall: { name: 'get_weather', arguments: { location: 'Paris, France' } },
      usage: { input: 67, output: 18 },
      reported: { prompt_tokens: 67, completion_tokens: 18, total_tokens: 85 },
    },
  },
  {
    file: 'gemini-signed-tool-call.sse',
    protocol: 'gemini',
    // Gemini's output is the candidates plus the thoughts (15 + 804).
    expected: {
      toolCall: { name: 'weather', arguments: { location: 'San Francisco' } },
      usage: { input: 29, output: 819 },
      reported: { promptTokenCount: 29, candidatesTokenCount: 15, thoughtsTokenCount: 804 },
    },
  },
  // Whole answers: the providers' documented examples and recorded bodies (the JSON holds the body alone).
  // https://github.com/vercel/ai packages/anthropic/src/__fixtures__/anthropic-refusal.json: no content, stop_details, a usage with service_tier and inference_geo.
  {
    file: 'anthropic-refusal.json',
    protocol: 'anthropic',
    expected: { refusal: true, usage: { input: 18, output: 5 }, reported: { input_tokens: 18, output_tokens: 5 } },
  },
  // https://docs.anthropic.com/en/docs/build-with-claude/tool-use: text, then a tool_use block.
  {
    file: 'anthropic-tool-use.json',
    protocol: 'anthropic',
    expected: {
      text: /current weather in San Francisco/,
      toolCall: { name: 'get_weather', arguments: { location: 'San Francisco, CA', unit: 'celsius' } },
      usage: { input: 494, output: 73 },
      reported: { input_tokens: 494, output_tokens: 73 },
    },
  },
  // https://github.com/vercel/ai packages/openai/src/responses/__fixtures__/openai-reasoning-encrypted-content.1.json: a reasoning item with encrypted content and summary, a function call.
  {
    file: 'responses-reasoning-tool.json',
    protocol: 'openai-responses',
    expected: {
      reasoning: /Calculating step by step/,
      toolCall: { name: 'calculator', arguments: { a: 12, b: 7, op: 'add' } },
      usage: { input: 98, output: 164 },
      reported: { input_tokens: 98, output_tokens: 164 },
    },
  },
  // https://platform.openai.com/docs/guides/function-calling: a message with tool_calls and no content.
  {
    file: 'chat-tool.json',
    protocol: 'openai',
    expected: {
      toolCall: { name: 'get_weather', arguments: { location: 'Paris, France' } },
      usage: { input: 67, output: 18 },
      reported: { prompt_tokens: 67, completion_tokens: 18 },
    },
  },
  // https://github.com/vercel/ai packages/google/src/__fixtures__/google-tool-call-gemini3.json: a functionCall part with its thoughtSignature.
  {
    file: 'gemini-signed-tool-call.json',
    protocol: 'gemini',
    expected: {
      toolCall: { name: 'weather', arguments: { location: 'San Francisco' } },
      usage: { input: 29, output: 819 },
      reported: { promptTokenCount: 29, candidatesTokenCount: 15, thoughtsTokenCount: 804 },
    },
  },
];

const PROTOCOLS: readonly Protocol[] = ['anthropic', 'openai-responses', 'openai', 'gemini'];
const modelOn = (protocol: Protocol) => `gateway/recorded-${protocol}`;

let gateway: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;
const upstreams = new Map<Protocol, ReplayUpstream>();

before(async () => {
  for (const protocol of PROTOCOLS) upstreams.set(protocol, await startReplayUpstream());
  gateway = await startGateway({
    config: chatModelsConfig(
      Object.fromEntries(
        PROTOCOLS.map((protocol) => {
          const origin = upstreams.get(protocol)!.origin;
          const baseUrl = protocol === 'openai' || protocol === 'openai-responses' ? `${origin}/v1` : origin;
          return [modelOn(protocol), [{ id: protocol, kind: protocol, baseUrl, apiKeyEnv: 'KEY' }]];
        }),
      ),
    ),
    env: { KEY: 'sk-recorded' },
    creditUsd: '10',
  });
  openai = new OpenAI({ apiKey: gateway.apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: gateway.apiKey, baseURL: gateway.baseUrl, maxRetries: 0 });
});

after(async () => {
  await gateway?.close();
  await Promise.all([...upstreams.values()].map((upstream) => upstream.close()));
});

/** What a dialect's SDK read from the answer, in common terms. */
interface Read {
  readonly text: string;
  readonly toolCall?: { readonly name: string; readonly arguments: Record<string, unknown> };
  readonly reasoning: string;
  readonly refusal: boolean;
}

const tool = (name: string) => ({ name, description: 'A tool.', parameters: { type: 'object', properties: {} } });
const TOOL_NAMES = ['get_weather', 'refresh_list', 'calculator', 'weather'];

const chatBody = (model: string) => ({
  model,
  messages: [{ role: 'user' as const, content: 'go' }],
  tools: TOOL_NAMES.map((name) => ({ type: 'function' as const, function: tool(name) })),
});
const responsesBody = (model: string) => ({
  model,
  input: 'go',
  tools: TOOL_NAMES.map((name) => ({ type: 'function' as const, ...tool(name), strict: false })),
});
const messagesBody = (model: string) => ({
  model,
  max_tokens: 1000,
  messages: [{ role: 'user' as const, content: 'go' }],
  tools: TOOL_NAMES.map((name) => ({ name, description: 'A tool.', input_schema: { type: 'object' as const, properties: {} } })),
});

function readCompletion(completion: OpenAI.ChatCompletion): Read {
  const message = completion.choices[0].message;
  const call = message.tool_calls?.[0];
  return {
    text: message.content ?? '',
    ...(call?.type === 'function' && { toolCall: { name: call.function.name, arguments: JSON.parse(call.function.arguments) } }),
    reasoning: (message as { reasoning_content?: string }).reasoning_content ?? '',
    refusal: completion.choices[0].finish_reason === 'content_filter',
  };
}

function readResponse(response: OpenAI.Responses.Response): Read {
  const call = response.output.find((item) => item.type === 'function_call');
  return {
    text: response.output_text,
    ...(call?.type === 'function_call' && { toolCall: { name: call.name, arguments: JSON.parse(call.arguments) } }),
    reasoning: response.output.flatMap((item) => (item.type === 'reasoning' ? item.summary.map((part) => part.text) : [])).join(''),
    refusal: response.incomplete_details?.reason === 'content_filter',
  };
}

function readMessage(message: Anthropic.Message): Read {
  const call = message.content.find((block) => block.type === 'tool_use');
  const refusal = message.stop_reason === 'refusal';
  if (refusal) assert.equal(message.stop_details?.type, 'refusal', 'the refusal keeps its details');
  return {
    text: message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join(''),
    ...(call?.type === 'tool_use' && { toolCall: { name: call.name, arguments: call.input as Record<string, unknown> } }),
    reasoning: message.content.flatMap((block) => (block.type === 'thinking' ? [block.thinking] : [])).join(''),
    refusal,
  };
}

/** Each dialect through its official SDK: streamed with the SDK's helper, which assembles the answer, or whole. */
const DIALECTS: readonly { readonly name: string; readonly read: (model: string, stream: boolean) => Promise<Read> }[] = [
  {
    name: 'chat completions (openai SDK)',
    read: async (model, stream) =>
      readCompletion(
        stream
          ? await openai.chat.completions.stream({ ...chatBody(model), stream_options: { include_usage: true } }).finalChatCompletion()
          : await openai.chat.completions.create(chatBody(model)),
      ),
  },
  {
    name: 'responses (openai SDK)',
    read: async (model, stream) =>
      readResponse(stream ? await openai.responses.stream(responsesBody(model)).finalResponse() : await openai.responses.create(responsesBody(model))),
  },
  {
    name: 'messages (@anthropic-ai/sdk)',
    read: async (model, stream) =>
      readMessage(stream ? await anthropic.messages.stream(messagesBody(model)).finalMessage() : await anthropic.messages.create(messagesBody(model))),
  },
];

for (const { file, protocol, expected } of RECORDINGS) {
  describe(`${file} (${protocol} upstream)`, () => {
    const recording = readFileSync(`${import.meta.dirname}/recordings/${file}`, 'utf8');
    for (const dialect of DIALECTS) {
      test(dialect.name, async () => {
        const upstream = upstreams.get(protocol)!;
        const stream = file.endsWith('.sse');
        upstream.script(stream ? { sse: recording, chunks: 5 } : { json: JSON.parse(recording) });
        const before = await ledger(gateway);
        const reading = dialect.read(modelOn(protocol), stream);
        if (expected.failure !== undefined) {
          await assert.rejects(reading, (error: unknown) => {
            assert.ok(error instanceof OpenAI.APIError || error instanceof Anthropic.APIError, String(error));
            assert.equal(error.status, expected.failure!.status);
            assert.match(error.message, expected.failure!.message);
            return true;
          });
        } else {
          const read = await reading;
          if (expected.text) assert.match(read.text, expected.text);
          if (expected.toolCall) assert.deepEqual(read.toolCall, expected.toolCall);
          // Chat completions carry no reasoning text; the other dialects show it.
          if (expected.reasoning && !dialect.name.startsWith('chat')) assert.match(read.reasoning, expected.reasoning);
          assert.equal(read.refusal, expected.refusal === true);
        }
        assert.equal(upstream.pending(), 0, 'the recording was replayed');
        const cost =
          expected.usage === undefined
            ? undefined
            : routeCost(0, { uncached: expected.usage.input, cacheRead: 0, cacheWrite: 0, output: expected.usage.output });
        const charges = await eventually(async () => {
          assert.equal((await ledger(gateway)).balance.reserved, 0n);
          const found = await newCharges(gateway, before);
          assert.deepEqual(
            found.map((charge) => charge.amount),
            cost === undefined ? [] : [cost],
          );
          return found;
        });
        // The request log row keeps the usage object as the provider wrote it.
        if (expected.reported !== undefined) {
          const row = await loggedRequest(gateway, charges[0].requestId!);
          for (const [field, count] of Object.entries(expected.reported)) assert.equal(row.providerUsage?.[field], count, field);
        }
      });
    }
  });
}
