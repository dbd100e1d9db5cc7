/**
 * The vendor request fields of docs/request-fields.md over real HTTP, sent by the official SDKs:
 * what reaches an upstream of the same protocol, what is translated, what is accepted as a hint and
 * sent nowhere, and what is refused with 400 `unsupported_parameter` naming the field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { ON_ANTHROPIC, ON_CHAT, ON_RESPONSES, startThreeUpstreams, type ThreeUpstreams } from './three-upstreams.ts';

let upstreams: ThreeUpstreams;
let openai: OpenAI;
let anthropic: Anthropic;

before(async () => {
  upstreams = await startThreeUpstreams();
  const { gateway } = upstreams;
  openai = new OpenAI({ apiKey: gateway.apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: gateway.apiKey, baseURL: gateway.baseUrl, maxRetries: 0 });
});

after(() => upstreams?.close());

async function refused(call: Promise<unknown>, param: string, message?: RegExp): Promise<void> {
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof OpenAI.APIError || error instanceof Anthropic.APIError, String(error));
    assert.equal(error.status, 400);
    const body = error.error as { error?: { code?: string; param?: string; message?: string } } & { code?: string; param?: string; message?: string };
    const envelope = body.error ?? body;
    assert.equal(envelope.code, 'unsupported_parameter');
    assert.equal(envelope.param, param);
    if (message) assert.match(envelope.message ?? '', message);
    return true;
  });
}

const weatherTool = {
  name: 'get_weather',
  description: 'The weather in a city.',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('messages fields', () => {
  test('what the AI SDK sends with a streamed tool call: eager_input_streaming is a hint; input_examples, output_config and service_tier', async () => {
    const before = upstreams.anthropicUpstream.requests.length;
    const stream = anthropic.messages.stream({
      model: ON_ANTHROPIC,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [{ ...weatherTool, eager_input_streaming: true, input_examples: [{ city: 'Rome' }], defer_loading: false, allowed_callers: ['direct'] }],
      output_config: { effort: 'high', format: { type: 'json_schema', schema: { type: 'object', properties: { answer: { type: 'string' } } } } },
      service_tier: 'standard_only',
    });
    await stream.finalMessage();
    assert.equal(upstreams.anthropicUpstream.requests.length, before + 1);
    const body = upstreams.anthropicUpstream.requests.at(-1)!.body;
    assert.deepEqual(body.tools, [{ ...weatherTool, input_examples: [{ city: 'Rome' }] }]);
    assert.deepEqual(body.output_config, {
      effort: 'high',
      format: { type: 'json_schema', schema: { type: 'object', properties: { answer: { type: 'string' } } } },
    });
    assert.equal(body.service_tier, undefined, 'the standard tier is every upstream default');
  });

  test("Anthropic-only fields are refused on another protocol's route, naming the field; the hint is not", async () => {
    await refused(
      anthropic.messages.create({
        model: ON_CHAT,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi' }],
        tools: [weatherTool, { ...weatherTool, name: 'other', input_examples: [{ city: 'Rome' }] }],
      }),
      'tools[1].input_examples',
    );
    await refused(
      anthropic.messages.create({ model: ON_RESPONSES, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], output_config: { effort: 'low' } }),
      'output_config.effort',
    );
    const message = await anthropic.messages.create({
      model: ON_CHAT,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ ...weatherTool, eager_input_streaming: true }],
    });
    assert.equal(message.type, 'message');
    assert.equal(upstreams.chatUpstream.requests.at(-1)!.body.tools[0].function.eager_input_streaming, undefined);
  });

  test('refused: a deferred tool, another caller, a container, a region, another service tier', async () => {
    const base = { model: ON_ANTHROPIC, max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }] };
    await refused(anthropic.messages.create({ ...base, tools: [{ ...weatherTool, defer_loading: true }] }), 'tools[0].defer_loading', /tool search/);
    await refused(
      anthropic.messages.create({ ...base, tools: [{ ...weatherTool, allowed_callers: ['code_execution_20250825'] }] }),
      'tools[0].allowed_callers',
    );
    await refused(anthropic.messages.create({ ...base, container: 'container_1' }), 'container');
    await refused(anthropic.messages.create({ ...base, inference_geo: 'us' }), 'inference_geo');
    await refused(anthropic.messages.create({ ...base, service_tier: 'priority' as 'auto' }), 'service_tier');
  });
});

describe('responses fields', () => {
  test('what the AI SDK sends for a reasoning model without storage reaches a Responses upstream', async () => {
    await openai.responses.create({
      model: ON_RESPONSES,
      input: 'hi',
      store: false,
      include: ['reasoning.encrypted_content'],
      reasoning: { effort: 'low', summary: 'auto' },
      text: { verbosity: 'low' },
      service_tier: 'auto',
      truncation: 'disabled',
      prompt_cache_key: 'conversation-1',
    });
    const body = upstreams.responsesUpstream.requests.at(-1)!.body;
    assert.deepEqual(body.reasoning, { effort: 'low', summary: 'auto' });
    assert.deepEqual(body.text, { verbosity: 'low' });
    assert.deepEqual(body.include, ['reasoning.encrypted_content']);
    for (const field of ['service_tier', 'truncation', 'prompt_cache_key', 'store']) assert.equal(body[field], undefined, field);
  });

  test('a reasoning summary is what an Anthropic route returns anyway; verbosity is refused there', async () => {
    const response = await openai.responses.create({ model: ON_ANTHROPIC, input: 'hi', reasoning: { summary: 'detailed' } });
    assert.equal(response.status, 'completed');
    await refused(openai.responses.create({ model: ON_ANTHROPIC, input: 'hi', text: { verbosity: 'high' } }), 'text.verbosity');
    await refused(openai.responses.create({ model: ON_CHAT, input: 'hi', reasoning: { summary: 'auto' } }), 'reasoning.summary');
  });

  test('refused: other include values, truncation auto, another service tier, stored prompts', async () => {
    await refused(
      openai.responses.create({ model: ON_RESPONSES, input: 'hi', include: ['reasoning.encrypted_content', 'web_search_call.results'] }),
      'include[1]',
    );
    await refused(openai.responses.create({ model: ON_RESPONSES, input: 'hi', truncation: 'auto' }), 'truncation', /never drops input/);
    await refused(openai.responses.create({ model: ON_RESPONSES, input: 'hi', service_tier: 'flex' }), 'service_tier', /standard tier/);
    await refused(openai.responses.create({ model: ON_RESPONSES, input: 'hi', prompt: { id: 'pmpt_1' } }), 'prompt');
  });
});

describe('chat fields', () => {
  test('verbosity reaches a chat upstream; metadata, the standard tier, text modality and a cache key are accepted and not sent', async () => {
    await openai.chat.completions.create({
      model: ON_CHAT,
      messages: [{ role: 'user', content: 'hi' }],
      verbosity: 'high',
      metadata: { session: 's-1' },
      service_tier: 'default',
      modalities: ['text'],
      prompt_cache_key: 'conversation-1',
    });
    const body = upstreams.chatUpstream.requests.at(-1)!.body;
    assert.equal(body.verbosity, 'high');
    for (const field of ['metadata', 'service_tier', 'modalities', 'prompt_cache_key']) assert.equal(body[field], undefined, field);
    await refused(openai.chat.completions.create({ model: ON_ANTHROPIC, messages: [{ role: 'user', content: 'hi' }], verbosity: 'low' }), 'verbosity');
  });

  test('refused: another service tier, logit_bias, audio, legacy functions', async () => {
    const base = { model: ON_CHAT, messages: [{ role: 'user' as const, content: 'hi' }] };
    await refused(openai.chat.completions.create({ ...base, service_tier: 'priority' }), 'service_tier');
    await refused(openai.chat.completions.create({ ...base, logit_bias: { '50256': -100 } }), 'logit_bias');
    await refused(openai.chat.completions.create({ ...base, audio: { voice: 'alloy', format: 'mp3' } }), 'audio');
    await refused(openai.chat.completions.create({ ...base, functions: [{ name: 'f' }] }), 'functions');
  });
});
