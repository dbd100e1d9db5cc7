/**
 * The Anthropic protocol over real HTTP against the simulator: the translator and the shared
 * transport together, faults included.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AssistantContentPart, CanonicalRequest, Message } from '../../../src/canonical/index.ts';
import { GatewayError } from '../../../src/core/errors.ts';
import { anthropicTranslator } from '../../../src/protocols/anthropic/index.ts';
import { httpChatProtocol } from '../../../src/protocols/http-protocol.ts';
import { startAnthropicSimulator, type AnthropicSimulator } from '../../simulators/anthropic.ts';
import { callContext, simulatorEndpoint } from '../../simulators/endpoint.ts';
import { canonicalRequest, collect, WEATHER_TOOL } from '../helpers.ts';

const anthropicProtocol = httpChatProtocol(anthropicTranslator);

const request = (fields: Partial<CanonicalRequest>) => canonicalRequest(fields, 'Hello there');

describe('anthropic protocol ⇄ simulator', () => {
  let sim: AnthropicSimulator;
  let endpoint: ReturnType<typeof simulatorEndpoint>;
  before(async () => {
    sim = await startAnthropicSimulator({ apiKey: 'sk-ant-test' });
    endpoint = simulatorEndpoint({ kind: 'anthropic', base_url: sim.baseUrl }, 'claude-sim');
  });
  after(() => sim.close());
  const context = callContext({ apiKey: 'sk-ant-test' });

  test('complete: text, usage, the wire request', async () => {
    const result = await anthropicProtocol.complete(request({ system: [{ text: 'Be brief.' }] }), endpoint, context);
    assert.deepEqual(result.content, [{ type: 'text', text: 'Echo: Hello there' }]);
    assert.deepEqual(result.finish, { reason: 'stop', raw: 'end_turn' });
    assert.equal(result.usage.outputTokens, 3);
    const sent = sim.requests.at(-1)!;
    assert.equal(sent.headers['anthropic-version'], '2023-06-01');
    assert.deepEqual(sent.body.system, [{ type: 'text', text: 'Be brief.' }]);
    assert.equal(sent.body.max_tokens, 4096);
  });

  test('stream: the exact event sequence decodes to ordered canonical events', async () => {
    const events = await collect(anthropicProtocol.stream(request({ stream: true }), endpoint, context));
    assert.deepEqual(
      events.map((event) => event.type),
      ['start', 'usage', 'text-start', 'text-delta', 'text-delta', 'text-delta', 'text-end', 'usage', 'finish'],
    );
    assert.equal(events.flatMap((event) => (event.type === 'text-delta' ? [event.text] : [])).join(''), 'Echo: Hello there');
  });

  test('tool loop with thinking: the signed thinking block is replayed unchanged and accepted', async () => {
    const first = request({ tools: [WEATHER_TOOL], maxOutputTokens: 8000, reasoning: { kind: 'effort', effort: 'low' } });
    const turn = await anthropicProtocol.complete(first, endpoint, context);
    assert.equal(turn.finish.reason, 'tool_calls');
    const [thinking, call] = turn.content;
    assert.equal(thinking.type, 'reasoning');
    assert.equal(thinking.type === 'reasoning' && thinking.signature?.family, 'anthropic');
    assert.equal(call.type, 'tool_call');
    assert.deepEqual(sim.requests.at(-1)!.body.thinking, { type: 'enabled', budget_tokens: 2000 });
    const toolCall = call as Extract<AssistantContentPart, { type: 'tool_call' }>;
    const messages: Message[] = [
      ...first.messages,
      { role: 'assistant', content: turn.content },
      { role: 'tool', content: [{ type: 'tool_result', toolCallId: toolCall.id, content: [{ type: 'text', text: 'sunny' }] }] },
    ];
    const second = await anthropicProtocol.complete({ ...first, messages }, endpoint, context);
    assert.deepEqual(second.content.at(-1), { type: 'text', text: 'Tool results: sunny' });
    // A thinking block from another conversation's signature would have been refused by the API.
    const forged: Message[] = [...messages];
    forged[1] = { role: 'assistant', content: [{ type: 'reasoning', text: 'x', signature: { family: 'anthropic', value: 'forged' } }, toolCall] };
    await assert.rejects(anthropicProtocol.complete({ ...first, messages: forged }, endpoint, context), { status: 400, retryable: false });
  });

  test('streamed tool calls arrive as start, argument fragments, end', async () => {
    const events = await collect(anthropicProtocol.stream(request({ stream: true, tools: [WEATHER_TOOL] }), endpoint, context));
    const args = events.flatMap((event) => (event.type === 'tool-call-delta' ? [event.argumentsDelta] : [])).join('');
    assert.equal(args, '{"city":"sample"}');
    assert.deepEqual(events.at(-1), { type: 'finish', finish: { reason: 'tool_calls', raw: 'tool_use' } });
  });

  test('cache on: the first call writes the prefix, the next call reads it', async () => {
    const cached = request({ system: [{ text: 'A long shared instruction. '.repeat(20) }], cache: { mode: 'on' } });
    const first = await anthropicProtocol.complete(cached, endpoint, context);
    assert.ok(first.usage.cacheWriteTokens > 0);
    assert.equal(first.usage.cacheReadTokens, 0);
    const next = await anthropicProtocol.complete(
      { ...cached, messages: [...cached.messages, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'text', text: 'More' }] }] },
      endpoint,
      context,
    );
    assert.ok(next.usage.cacheReadTokens >= first.usage.cacheWriteTokens);
  });

  test('cache writes split by lifetime: the prefix up to the 1-hour breakpoint for an hour, the rest for 5 minutes, whole and streamed', async () => {
    const mixed = request({
      system: [{ text: 'A long instruction kept for an hour. '.repeat(20), cacheControl: { type: 'ephemeral', ttl: '1h' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'A long question kept for five minutes. '.repeat(20), cacheControl: { type: 'ephemeral' } }] },
      ],
    });
    for (const result of [
      (await anthropicProtocol.complete(mixed, endpoint, context)).usage,
      (
        await collect(
          anthropicProtocol.stream({ ...mixed, stream: true, system: [{ ...mixed.system![0], text: `Another. ${mixed.system![0].text}` }] }, endpoint, context),
        )
      )
        .flatMap((event) => (event.type === 'usage' ? [event.usage] : []))
        .at(-1)!,
    ]) {
      const { cacheWriteTokens, cacheWrite1hTokens = 0 } = result;
      assert.ok(cacheWrite1hTokens > 0 && cacheWrite1hTokens < cacheWriteTokens, `1-hour ${cacheWrite1hTokens} of ${cacheWriteTokens} written`);
    }
    const sent = sim.requests.at(-2)!.body;
    assert.deepEqual([sent.system[0].cache_control, sent.messages[0].content[0].cache_control], [{ type: 'ephemeral', ttl: '1h' }, { type: 'ephemeral' }]);
  });

  test('web search: the server tool runs; the queries that ran, the billed count and the cited span come back, whole and streamed', async () => {
    const searching = await startAnthropicSimulator({ searchQueries: 7 });
    try {
      const at = simulatorEndpoint({ kind: 'anthropic', base_url: searching.baseUrl }, 'claude-sim');
      const searched = { queries: ['Hello there', 'Hello there 2', 'Hello there 3', 'Hello there 4', 'Hello there 5'], billedQueries: 5 };
      const citations = [{ url: 'https://example.com/1/1', title: 'Result 1', startIndex: 0, endIndex: 17 }];
      const result = await anthropicProtocol.complete(request({ webSearch: true }), at, context);
      assert.deepEqual(searching.requests.at(-1)!.body.tools, [{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }]);
      assert.deepEqual(result.content, [{ type: 'text', text: 'Echo: Hello there' }]);
      assert.deepEqual([result.webSearch, result.citations], [searched, citations]);
      const events = await collect(anthropicProtocol.stream(request({ webSearch: true, stream: true }), at, context));
      const webSearch = events.filter((event) => event.type === 'web-search');
      assert.equal(webSearch.length, 6, 'one per search that ran, then the billed count');
      assert.deepEqual(webSearch.at(-1), { type: 'web-search', webSearch: searched });
      assert.deepEqual(
        events.find((event) => event.type === 'text-end'),
        { type: 'text-end', index: 0, citations: [{ ...citations[0], url: 'https://example.com/2/1' }] },
      );
    } finally {
      await searching.close();
    }
  });

  test('faults: 529 and 429 are retryable; a bad key is a non-retryable 502', async () => {
    sim.enqueue({ kind: 'status', status: 529 }, { kind: 'status', status: 429, headers: { 'retry-after': '2' } });
    await assert.rejects(anthropicProtocol.complete(request({}), endpoint, context), { status: 503, retryable: true });
    await assert.rejects(anthropicProtocol.complete(request({}), endpoint, context), { status: 429, retryable: true, retryAfterSeconds: 2 });
    await assert.rejects(anthropicProtocol.complete(request({}), endpoint, callContext({ apiKey: 'wrong' })), { status: 502, retryable: false });
  });

  test('faults in a stream: an error event after output; a reset before the first event is thrown', async () => {
    sim.enqueue({ kind: 'stream-error', afterEvents: 4 });
    const events = await collect(anthropicProtocol.stream(request({ stream: true }), endpoint, context));
    const last = events.at(-1)!;
    assert.equal(last.type, 'error');
    assert.equal(last.type === 'error' && last.error.retryable, true);
    sim.enqueue({ kind: 'reset', afterEvents: 0 });
    await assert.rejects(
      collect(anthropicProtocol.stream(request({ stream: true }), endpoint, context)),
      (error: unknown) => error instanceof GatewayError && error.retryable,
    );
    sim.enqueue({ kind: 'truncate', afterEvents: 5 });
    const cut = await collect(anthropicProtocol.stream(request({ stream: true }), endpoint, context));
    assert.equal(cut.at(-1)!.type, 'error');
  });
});
