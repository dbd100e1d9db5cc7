/**
 * The Gemini protocol over real HTTP against the simulator: the translator and the shared transport
 * together, thought-signature replay and faults included.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AssistantContentPart, CanonicalRequest, Message, ToolCallPart } from '../../../src/canonical/index.ts';
import { GatewayError } from '../../../src/core/errors.ts';
import { geminiTranslator } from '../../../src/protocols/gemini/index.ts';
import { httpChatProtocol } from '../../../src/protocols/http-protocol.ts';
import { callContext, simulatorEndpoint } from '../../simulators/endpoint.ts';
import { startGeminiSimulator, type GeminiSimulator } from '../../simulators/gemini.ts';
import { canonicalRequest, collect, WEATHER_TOOL } from '../helpers.ts';

const geminiProtocol = httpChatProtocol(geminiTranslator);

const request = (fields: Partial<CanonicalRequest>) => canonicalRequest(fields, 'Hello there');
const time = { name: 'get_time', parameters: { type: 'object', properties: {} } };

/** The conversation after the model's tool calls, each answered. */
function answered(first: CanonicalRequest, content: readonly AssistantContentPart[]): Message[] {
  const calls = content.filter((part): part is ToolCallPart => part.type === 'tool_call');
  return [
    ...first.messages,
    { role: 'assistant', content },
    ...calls.map(
      (call): Message => ({ role: 'tool', content: [{ type: 'tool_result', toolCallId: call.id, content: [{ type: 'text', text: `${call.name} done` }] }] }),
    ),
  ];
}

describe('gemini protocol ⇄ simulator', () => {
  let sim: GeminiSimulator;
  let endpoint: ReturnType<typeof simulatorEndpoint>;
  before(async () => {
    sim = await startGeminiSimulator({ apiKey: 'g-key' });
    endpoint = simulatorEndpoint({ kind: 'gemini', base_url: sim.baseUrl }, 'gemini-sim');
  });
  after(() => sim.close());
  const context = callContext({ apiKey: 'g-key' });

  test('complete: text and usage; the request path and key', async () => {
    const result = await geminiProtocol.complete(request({}), endpoint, context);
    assert.deepEqual(result.content, [{ type: 'text', text: 'Echo: Hello there' }]);
    assert.deepEqual(result.finish, { reason: 'stop', raw: 'STOP' });
    assert.equal(result.usage.outputTokens, 3);
    assert.equal(sim.requests.at(-1)!.path, '/v1beta/models/gemini-sim:generateContent');
  });

  test('stream: text in pieces, running usage, one finish at the end', async () => {
    const events = await collect(geminiProtocol.stream(request({ stream: true }), endpoint, context));
    assert.equal(sim.requests.at(-1)!.path, '/v1beta/models/gemini-sim:streamGenerateContent?alt=sse');
    assert.equal(events.flatMap((event) => (event.type === 'text-delta' ? [event.text] : [])).join(''), 'Echo: Hello there');
    assert.deepEqual(events.at(-1), { type: 'finish', finish: { reason: 'stop', raw: 'STOP' } });
    assert.equal(events.filter((event) => event.type === 'finish').length, 1);
  });

  test('tool loop: the signature goes back on its functionCall part and Gemini accepts the turn', async () => {
    const first = request({ tools: [WEATHER_TOOL, time] });
    const turn = await geminiProtocol.complete(first, endpoint, context);
    assert.equal(turn.finish.reason, 'tool_calls');
    const [signed, unsigned] = turn.content as ToolCallPart[];
    assert.equal(signed.id, 'call_0_get_weather');
    assert.equal(signed.signature?.family, 'gemini');
    assert.equal(unsigned.signature, undefined);
    const second = await geminiProtocol.complete({ ...first, messages: answered(first, turn.content) }, endpoint, context);
    assert.deepEqual(second.content, [{ type: 'text', text: 'Tool results: get_weather done; get_time done' }]);
    const replayed = sim.requests.at(-1)!.body.contents[1].parts[0];
    assert.deepEqual(replayed, { functionCall: { name: 'get_weather', args: { city: 'sample' } }, thoughtSignature: signed.signature?.value });
  });

  test('the signature in its chat extra_content form is replayed too', async () => {
    const first = request({ tools: [WEATHER_TOOL] });
    const turn = await geminiProtocol.complete(first, endpoint, context);
    const call = turn.content[0] as ToolCallPart;
    const asChatClientSends: ToolCallPart = {
      type: 'tool_call',
      id: call.id,
      name: call.name,
      arguments: call.arguments,
      extraContent: { google: { thought_signature: call.signature!.value } },
    };
    const second = await geminiProtocol.complete({ ...first, messages: answered(first, [asChatClientSends]) }, endpoint, context);
    assert.equal(second.finish.reason, 'stop');
  });

  test('a replayed call without its signature is refused: 400 "missing a thought_signature"', async () => {
    const first = request({ tools: [WEATHER_TOOL] });
    const turn = await geminiProtocol.complete(first, endpoint, context);
    const { signature: _dropped, ...stripped } = turn.content[0] as ToolCallPart;
    await assert.rejects(geminiProtocol.complete({ ...first, messages: answered(first, [stripped]) }, endpoint, context), (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.status, 400);
      assert.equal(error.retryable, false);
      assert.match(error.message, /missing a `thought_signature`/);
      return true;
    });
  });

  test('streamed function calls carry their signature on the start event', async () => {
    const events = await collect(geminiProtocol.stream(request({ stream: true, tools: [WEATHER_TOOL] }), endpoint, context));
    const start = events.find((event) => event.type === 'tool-call-start');
    assert.equal(start?.type === 'tool-call-start' && start.signature?.family, 'gemini');
    assert.deepEqual(events.at(-1), { type: 'finish', finish: { reason: 'tool_calls', raw: 'STOP' } });
  });

  test('web search: grounding metadata → web search info and citations', async () => {
    const result = await geminiProtocol.complete(request({ webSearch: true }), endpoint, context);
    assert.deepEqual(sim.requests.at(-1)!.body.tools, [{ googleSearch: {} }]);
    assert.deepEqual(result.webSearch?.queries, ['Hello there']);
    assert.match(result.webSearch?.searchEntryPointHtml ?? '', /<div class="chip">Hello there<\/div>/);
    assert.equal(result.webSearch?.billedQueries, 1);
    assert.deepEqual(result.citations, [
      { url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/sim', title: 'example.com', startIndex: 0, endIndex: 17 },
    ]);
    const streamed = await collect(geminiProtocol.stream(request({ stream: true, webSearch: true }), endpoint, context));
    assert.ok(streamed.some((event) => event.type === 'web-search'));
  });

  test('thinking with thought summaries → a reasoning part before the text', async () => {
    const result = await geminiProtocol.complete(request({ reasoning: { kind: 'effort', effort: 'low' } }), endpoint, context);
    assert.deepEqual(
      result.content.map((part) => part.type),
      ['reasoning', 'text'],
    );
    assert.ok(result.usage.reasoningTokens > 0);
  });

  test('faults: 429 and 503 retryable, a bad key a non-retryable 502, errors mid-stream and cut bodies', async () => {
    sim.enqueue({ kind: 'status', status: 429 }, { kind: 'status', status: 503 });
    await assert.rejects(geminiProtocol.complete(request({}), endpoint, context), { status: 429, retryable: true });
    await assert.rejects(geminiProtocol.complete(request({}), endpoint, context), { status: 503, retryable: true });
    await assert.rejects(geminiProtocol.complete(request({}), endpoint, callContext({ apiKey: 'wrong' })), { status: 502, retryable: false });
    sim.enqueue({ kind: 'stream-error', afterEvents: 2 });
    const failed = (await collect(geminiProtocol.stream(request({ stream: true }), endpoint, context))).at(-1);
    assert.equal(failed?.type === 'error' && failed.error.status, 503);
    sim.enqueue({ kind: 'truncate', afterEvents: 2 });
    const cut = await collect(geminiProtocol.stream(request({ stream: true }), endpoint, context));
    assert.equal(cut.at(-1)?.type, 'error');
  });

  test('an answer whose body goes silent after its headers: a retryable timeout once timeout_ms passes, plain or streamed', { timeout: 60_000 }, async () => {
    const impatient = simulatorEndpoint({ kind: 'gemini', base_url: sim.baseUrl, timeout_ms: 200 }, 'gemini-sim');
    sim.enqueue({ kind: 'stall', afterEvents: 0 }, { kind: 'stall', afterEvents: 2 });
    await assert.rejects(geminiProtocol.complete(request({}), impatient, context), { status: 502, code: 'upstream_timeout', retryable: true });
    const stalled = await collect(geminiProtocol.stream(request({ stream: true }), impatient, context));
    assert.ok(
      stalled.some((event) => event.type === 'text-delta'),
      'the events before the silence arrive',
    );
    const last = stalled.at(-1);
    assert.deepEqual(last?.type === 'error' && [last.error.code, last.error.retryable], ['upstream_timeout', true]);
  });
});
