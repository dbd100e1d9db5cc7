/** The chat stream encoder alone, fed canonical events: ordering, tool call indexes, errors, usage. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { StreamBatch, StreamEvent } from '../../src/canonical/index.ts';
import { GatewayError } from '../../src/core/errors.ts';
import { chatFrameEncoder } from '../../src/dialects/chat/stream.ts';
import type { TextCall, TextSettlement } from '../../src/pipeline/kinds/text.ts';
import type { StreamRun } from '../../src/pipeline/text-stream.ts';
import { chatRequest, endpoint, routeOf } from './helpers.ts';

const call: TextCall = {
  requestId: 'req_abc',
  request: chatRequest({ stream: true }),
  modelId: 'gateway/m',
  endpoint: routeOf(endpoint('m')),
  createdAt: 1_700_000_000_500,
};
const settlement: TextSettlement = {
  usage: { inputTokens: 5, cacheReadTokens: 2, cacheWriteTokens: 1, outputTokens: 7, reasoningTokens: 3 },
  searchUnits: 0,
  charged: 123_456n,
  overHold: 0n,
};

async function frames(events: StreamEvent[], includeUsage: boolean, request = call.request): Promise<unknown[]> {
  const run: StreamRun = {
    call: { ...call, request },
    settlement,
    events: (async function* () {
      for (const event of events) yield [event] as const;
    })(),
  };
  const out: unknown[] = [];
  for await (const frame of framesOf(run, includeUsage)) {
    assert.match(frame, /^data: .*\n\n$/s);
    const data = frame.slice(6, -2);
    out.push(data === '[DONE]' ? data : JSON.parse(data));
  }
  return out;
}

/** Each SSE frame the encoder writes for the run's events, one string per frame (JSON never holds a raw blank line). */
async function* framesOf(run: StreamRun, includeUsage: boolean): AsyncGenerator<string> {
  const encode = chatFrameEncoder(run, includeUsage);
  for await (const batch of run.events)
    for (const event of batch)
      yield* encode(event)
        .split(/(?<=\n\n)/)
        .filter(Boolean);
}

const deltas = (chunks: unknown[]) =>
  chunks.filter(
    (chunk): chunk is { choices: Array<{ delta: Record<string, unknown>; finish_reason: string | null }> } =>
      typeof chunk === 'object' && (chunk as { choices?: unknown[] }).choices?.length === 1,
  );

describe('chatFrameEncoder', () => {
  test('role first, text deltas, one finish chunk, the usage chunk with cost, then [DONE]', async () => {
    const out = await frames(
      [
        { type: 'start' },
        { type: 'text-start', index: 0 },
        { type: 'text-delta', index: 0, text: 'Hel' },
        { type: 'text-delta', index: 0, text: 'lo' },
        { type: 'text-end', index: 0 },
        { type: 'usage', usage: settlement.usage },
        { type: 'finish', finish: { reason: 'stop', raw: 'stop' } },
      ],
      true,
    );
    const chunks = deltas(out);
    assert.deepEqual(
      chunks.map((chunk) => chunk.choices[0].delta),
      [{ role: 'assistant', content: '' }, { content: 'Hel' }, { content: 'lo' }, {}],
    );
    assert.deepEqual(
      chunks.map((chunk) => chunk.choices[0].finish_reason),
      [null, null, null, 'stop'],
    );
    assert.ok(chunks.every((chunk) => (chunk as unknown as { usage: unknown }).usage === null));
    const first = chunks[0] as unknown as Record<string, unknown>;
    assert.equal(first.id, 'chatcmpl-abc');
    assert.equal(first.created, 1_700_000_000);
    assert.deepEqual(out.at(-2), {
      id: 'chatcmpl-abc',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'gateway/m',
      choices: [],
      usage: {
        prompt_tokens: 8,
        completion_tokens: 7,
        total_tokens: 15,
        prompt_tokens_details: { cached_tokens: 2, cache_creation_tokens: 1 },
        completion_tokens_details: { reasoning_tokens: 3 },
        cost: '0.000000123456',
      },
    });
    assert.equal(out.at(-1), '[DONE]');
  });

  test('a delta chunk is exactly the JSON of its object form, key order included', async () => {
    for (const includeUsage of [true, false]) {
      const run: StreamRun = {
        call,
        settlement,
        events: (async function* (): AsyncGenerator<StreamBatch> {
          yield [{ type: 'text-delta', index: 0, text: 'a "quoted"\nline' }];
          yield [{ type: 'finish', finish: { reason: 'stop', raw: 'stop' } }];
        })(),
      };
      const raw: string[] = [];
      for await (const frame of framesOf(run, includeUsage)) raw.push(frame);
      const expected = {
        id: 'chatcmpl-abc',
        object: 'chat.completion.chunk',
        created: 1_700_000_000,
        model: 'gateway/m',
        choices: [{ index: 0, delta: { content: 'a "quoted"\nline' }, logprobs: null, finish_reason: null }],
        ...(includeUsage ? { usage: null } : {}),
      };
      assert.equal(raw[1], `data: ${JSON.stringify(expected)}\n\n`);
    }
  });

  test("a text delta with logprobs carries them in OpenAI's shape, key order included; other chunks keep logprobs null", async () => {
    const hi = { token: 'Hi', logprob: -0.25, bytes: [72, 105] };
    const run: StreamRun = {
      call,
      settlement,
      events: (async function* (): AsyncGenerator<StreamBatch> {
        yield [
          { type: 'text-delta', index: 0, text: 'Hi', logprobs: [{ ...hi, topLogprobs: [hi, { token: 'Hey', logprob: -1.5, bytes: null }] }] },
          { type: 'text-delta', index: 0, text: '!' },
        ];
        yield [{ type: 'finish', finish: { reason: 'stop', raw: 'stop' } }];
      })(),
    };
    const raw: string[] = [];
    for await (const frame of framesOf(run, true)) raw.push(frame);
    const head = { id: 'chatcmpl-abc', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gateway/m' };
    const logprobs = {
      content: [{ token: 'Hi', logprob: -0.25, bytes: [72, 105], top_logprobs: [hi, { token: 'Hey', logprob: -1.5, bytes: null }] }],
      refusal: null,
    };
    assert.equal(
      raw[1],
      `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta: { content: 'Hi' }, logprobs, finish_reason: null }], usage: null })}\n\n`,
    );
    assert.equal(
      raw[2],
      `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta: { content: '!' }, logprobs: null, finish_reason: null }], usage: null })}\n\n`,
    );
  });

  test('parallel tool calls get stable indexes; id and name only on the first delta', async () => {
    const out = await frames(
      [
        { type: 'start' },
        { type: 'reasoning-start', index: 0 },
        { type: 'reasoning-delta', index: 0, text: 'hmm' },
        { type: 'reasoning-end', index: 0 },
        { type: 'tool-call-start', index: 1, id: 'a', name: 'f', signature: { family: 'gemini', value: 'sig' } },
        { type: 'tool-call-start', index: 2, id: 'b', name: 'g' },
        { type: 'tool-call-delta', index: 2, argumentsDelta: '{}' },
        { type: 'tool-call-delta', index: 1, argumentsDelta: '{"x":1}' },
        { type: 'finish', finish: { reason: 'tool_calls', raw: 'tool_calls' } },
      ],
      false,
    );
    const chunks = deltas(out).map((chunk) => chunk.choices[0].delta);
    assert.deepEqual(chunks.slice(1), [
      { reasoning_content: 'hmm' },
      {
        tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '' }, extra_content: { google: { thought_signature: 'sig' } } }],
      },
      { tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"x":1}' } }] },
      {},
    ]);
    assert.equal(out.at(-1), '[DONE]', 'no usage chunk without include_usage');
    assert.equal(out.length, 8);
  });

  test('an error after the start is one error event and the end of the stream', async () => {
    const out = await frames(
      [
        { type: 'start' },
        { type: 'text-start', index: 0 },
        { type: 'text-delta', index: 0, text: 'partial' },
        { type: 'error', error: new GatewayError({ code: 'upstream_error', status: 502, message: 'The upstream provider failed.' }) },
      ],
      true,
    );
    assert.deepEqual(out.at(-1), { error: { message: 'The upstream provider failed.', type: 'api_error', param: null, code: 'upstream_error' } });
    assert.ok(!out.includes('[DONE]'));
  });

  test('a stream without a start event still opens with the role chunk; web search rides on the finish chunk', async () => {
    const out = await frames(
      [
        { type: 'text-delta', index: 0, text: 'x' },
        { type: 'web-search', webSearch: { queries: ['q'], searchEntryPointHtml: '<div/>', billedQueries: 1 } },
        { type: 'finish', finish: { reason: 'length', raw: 'max_tokens' } },
      ],
      false,
      chatRequest({ stream: true, tools: [{ type: 'web_search' }] }),
    );
    const chunks = deltas(out);
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
    const finish = chunks.at(-1) as unknown as { choices: Array<{ finish_reason: string }>; x_gateway: unknown };
    assert.equal(finish.choices[0].finish_reason, 'length');
    assert.deepEqual(finish.x_gateway, { web_search: { queries: ['q'], search_entry_point_html: '<div/>', billed_queries: 0 } });
  });
});
