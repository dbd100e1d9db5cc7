/**
 * Fuzzed upstream answers on every text protocol, whole and streamed, and on every embeddings and
 * image protocol, whole: a valid answer with one field
 * turned into a wrong type, a negative or fractional count, a string number, null, or removed; or its
 * JSON cut short. Whatever comes, the gateway never answers 500, never charges a negative or NaN
 * amount, and either delivers the answer and charges it once or refuses it and charges nothing
 * (docs/protocols.md, "Validated upstream bodies"). The mutations come from a seeded generator, so a
 * failure names a case that replays.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { eventually } from '../chat/helpers.ts';
import { embeddingEndpoint, embeddingModel } from '../embeddings/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { imageEndpoint, imageModel } from '../images/helpers.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import { seededPng } from '../simulators/openai-images.ts';
import { startReplayUpstream, type ReplayAnswer, type ReplayUpstream } from '../simulators/replay.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface ProtocolCase {
  readonly kind: 'openai' | 'openai-responses' | 'anthropic' | 'gemini';
  readonly body: Json;
  /** The stream's events; `event` names the SSE event where the protocol names them. */
  readonly events: readonly { readonly event?: string; readonly data: Json }[];
  /** What ends the stream after its events (`[DONE]` for chat). */
  readonly terminator?: string;
}

const CASES: readonly ProtocolCase[] = [
  {
    kind: 'openai',
    body: {
      id: 'chatcmpl-1',
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, prompt_tokens_details: { cached_tokens: 0 } },
    },
    events: [
      { data: { id: 'c', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] } },
      { data: { id: 'c', model: 'm', choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: null }] } },
      { data: { id: 'c', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] } },
      { data: { id: 'c', model: 'm', choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } } },
    ],
    terminator: 'data: [DONE]\n\n',
  },
  {
    kind: 'openai-responses',
    body: {
      id: 'resp_1',
      object: 'response',
      model: 'm',
      status: 'completed',
      output: [
        { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello there', annotations: [] }] },
      ],
      usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
    },
    events: [
      {
        event: 'response.created',
        data: { type: 'response.created', sequence_number: 0, response: { id: 'resp_1', model: 'm', status: 'in_progress', output: [] } },
      },
      {
        event: 'response.output_item.added',
        data: {
          type: 'response.output_item.added',
          sequence_number: 1,
          output_index: 0,
          item: { type: 'message', id: 'msg_1', role: 'assistant', content: [] },
        },
      },
      {
        event: 'response.content_part.added',
        data: { type: 'response.content_part.added', sequence_number: 2, output_index: 0, content_index: 0, part: { type: 'output_text', text: '' } },
      },
      {
        event: 'response.output_text.delta',
        data: { type: 'response.output_text.delta', sequence_number: 3, output_index: 0, content_index: 0, delta: 'Hello' },
      },
      {
        event: 'response.content_part.done',
        data: {
          type: 'response.content_part.done',
          sequence_number: 4,
          output_index: 0,
          content_index: 0,
          part: { type: 'output_text', text: 'Hello', annotations: [] },
        },
      },
      {
        event: 'response.completed',
        data: {
          type: 'response.completed',
          sequence_number: 5,
          response: { id: 'resp_1', model: 'm', status: 'completed', output: [], usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 } },
        },
      },
    ],
  },
  {
    kind: 'anthropic',
    body: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [{ type: 'text', text: 'Hello there' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 2, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    },
    events: [
      {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], usage: { input_tokens: 5, output_tokens: 1 } },
        },
      },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } } },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ],
  },
  {
    kind: 'gemini',
    body: {
      candidates: [{ content: { role: 'model', parts: [{ text: 'Hello there' }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 },
      modelVersion: 'm',
      responseId: 'r1',
    },
    events: [
      {
        data: {
          candidates: [{ content: { role: 'model', parts: [{ text: 'Hello' }] }, index: 0 }],
          usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 1 },
          responseId: 'r1',
        },
      },
      {
        data: {
          candidates: [{ content: { role: 'model', parts: [{ text: ' there' }] }, finishReason: 'STOP', index: 0 }],
          usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 },
          responseId: 'r1',
        },
      },
    ],
  },
];

/** The values a field is turned into: wrong types, counts no provider may report, nothing. */
const BAD_VALUES: readonly (Json | undefined)[] = [-50, 5.5, '5', null, {}, [], true, undefined, 1e21, Number.MAX_SAFE_INTEGER];

/** A small seeded generator (mulberry32): the same seed gives the same cases. */
function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every path to a value inside `value`, the root excluded. */
function paths(value: Json, prefix: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== 'object') return prefix.length > 0 ? [prefix] : [];
  const keys: (string | number)[] = Array.isArray(value) ? value.map((_, index) => index) : Object.keys(value);
  return [...(prefix.length > 0 ? [prefix] : []), ...keys.flatMap((key) => paths((value as Record<string | number, Json>)[key], [...prefix, key]))];
}

/** A copy of `value` with the field at `path` set to `replacement` (removed when undefined). */
function mutated(value: Json, path: readonly (string | number)[], replacement: Json | undefined): Json {
  const copy = structuredClone(value);
  let parent = copy as Record<string | number, Json>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, Json>;
  const last = path.at(-1)!;
  if (replacement === undefined) {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else {
    parent[last] = replacement;
  }
  return copy;
}

const sseText = (events: ProtocolCase['events'], terminator = '') =>
  events.map(({ event, data }) => `${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`).join('') + terminator;

interface FuzzCase {
  readonly name: string;
  readonly answer: ReplayAnswer;
}

function wholeCases(protocol: { readonly body: Json }, random: () => number, count: number): FuzzCase[] {
  const all = paths(protocol.body);
  const cases: FuzzCase[] = [];
  for (let index = 0; index < count; index++) {
    const path = all[Math.floor(random() * all.length)];
    const value = BAD_VALUES[Math.floor(random() * BAD_VALUES.length)];
    cases.push({ name: `${path.join('.')} = ${JSON.stringify(value) ?? 'removed'}`, answer: { json: mutated(protocol.body, path, value) } });
  }
  const text = JSON.stringify(protocol.body);
  cases.push({ name: 'the body cut short', answer: { raw: text.slice(0, Math.floor(text.length * (0.3 + random() * 0.6))) } });
  return cases;
}

function streamCases(protocol: ProtocolCase, random: () => number, count: number): FuzzCase[] {
  const cases: FuzzCase[] = [];
  for (let index = 0; index < count; index++) {
    const at = Math.floor(random() * protocol.events.length);
    const target = protocol.events[at];
    const all = paths(target.data);
    const path = all[Math.floor(random() * all.length)];
    const value = BAD_VALUES[Math.floor(random() * BAD_VALUES.length)];
    const events = protocol.events.map((event, position) => (position === at ? { ...event, data: mutated(event.data, path, value) } : event));
    cases.push({
      name: `event ${at}: ${path.join('.')} = ${JSON.stringify(value) ?? 'removed'}`,
      answer: { sse: sseText(events, protocol.terminator), chunks: 3 },
    });
  }
  const whole = sseText(protocol.events, protocol.terminator);
  const cut = whole.indexOf('data: ', Math.floor(whole.length / 2)) + 12;
  cases.push({ name: 'an event cut short mid-JSON, then the stream ends', answer: { sse: whole.slice(0, cut) } });
  return cases;
}

const PER_MODE = 12;

let gateway: TestGateway;
const upstreams = new Map<ProtocolCase['kind'], ReplayUpstream>();
/** What the gateway logged at warn and above, read back by the test of a stream's failure. */
const logged: Record<string, unknown>[] = [];

before(async () => {
  for (const protocol of CASES) upstreams.set(protocol.kind, await startReplayUpstream());
  gateway = await startGateway({
    config: chatModelsConfig(
      Object.fromEntries(
        CASES.map((protocol) => {
          const origin = upstreams.get(protocol.kind)!.origin;
          const baseUrl = protocol.kind === 'openai' || protocol.kind === 'openai-responses' ? `${origin}/v1` : origin;
          return [`gateway/fuzz-${protocol.kind}`, [{ id: protocol.kind, kind: protocol.kind, baseUrl, apiKeyEnv: 'KEY' }]];
        }),
      ),
    ),
    env: { KEY: 'sk-fuzz' },
    creditUsd: '100',
    logger: pino({ level: 'warn', base: undefined }, { write: (line: string) => logged.push(JSON.parse(line)) }),
  });
});

after(async () => {
  await gateway?.close();
  await Promise.all([...upstreams.values()].map((upstream) => upstream.close()));
});

/** The request's charges once it has settled: no hold left open, every amount a non-negative integer. */
async function chargesOf(requestId: string, on: TestGateway = gateway): Promise<bigint[]> {
  const owner = { kind: 'account', id: on.account.id } as const;
  return eventually(async () => {
    const [balance, entries] = await Promise.all([on.store.getBalance(owner), on.store.listEntries(owner)]);
    assert.equal(balance.reserved, 0n, 'no hold is left open');
    const charges = entries.filter((entry) => entry.kind === 'charge' && entry.requestId === requestId).map((entry) => entry.amount);
    for (const amount of charges) assert.ok(typeof amount === 'bigint' && amount >= 0n, `a charge of ${String(amount)}`);
    return charges;
  }, 300);
}

async function send(kind: ProtocolCase['kind'], stream: boolean): Promise<{ status: number; requestId: string; text: string; headers: Headers }> {
  const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: `gateway/fuzz-${kind}`, messages: [{ role: 'user', content: 'hi' }], stream }),
  });
  return { status: response.status, requestId: response.headers.get('x-gateway-request-id') ?? '', text: await response.text(), headers: response.headers };
}

for (const protocol of CASES) {
  describe(`fuzzed ${protocol.kind} answers`, () => {
    test('whole bodies: a 200 charged once, or a 502 charged nothing; never a 500', async () => {
      const random = generator(protocol.kind.length * 7919);
      const outcomes = { delivered: 0, refused: 0 };
      for (const fuzz of wholeCases(protocol, random, PER_MODE)) {
        upstreams.get(protocol.kind)!.script(fuzz.answer);
        const { status, requestId, text, headers } = await send(protocol.kind, false);
        const charges = await chargesOf(requestId);
        if (status === 200) {
          outcomes.delivered++;
          assert.equal(charges.length, 1, `${fuzz.name}: charged once`);
          const cost = headers.get('x-gateway-cost-usd');
          assert.ok(cost !== null && /^\d+(\.\d+)?$/.test(cost), `${fuzz.name}: the cost shown is a non-negative decimal (${String(cost)})`);
        } else {
          outcomes.refused++;
          assert.equal(status, 502, `${fuzz.name}: ${status} ${text}`);
          assert.deepEqual(charges, [], `${fuzz.name}: nothing charged`);
        }
      }
      assert.ok(outcomes.refused > 0, 'some cases were refused');
    });

    test('streams: a started stream is charged once for what it delivered, a refused one nothing; never a 500', async () => {
      const random = generator(protocol.kind.length * 104729);
      for (const fuzz of streamCases(protocol, random, PER_MODE)) {
        upstreams.get(protocol.kind)!.script(fuzz.answer);
        const { status, requestId, text } = await send(protocol.kind, true);
        const charges = await chargesOf(requestId);
        assert.ok(status === 200 || status === 502, `${fuzz.name}: ${status} ${text}`);
        if (status === 502) assert.deepEqual(charges, [], `${fuzz.name}: nothing charged`);
        else assert.ok(charges.length <= 1, `${fuzz.name}: at most one charge`);
        assert.doesNotMatch(text, /internal_error/, fuzz.name);
      }
    });
  });
}

test('a stream that fails after its first byte is logged once: code, provider, upstream model, request id, the raw event cut short; never the prompt or a key', async () => {
  const chat = CASES.find((protocol) => protocol.kind === 'openai')!;
  const events = chat.events.map((event, position) => (position === 3 ? { ...event, data: mutated(event.data, ['usage', 'completion_tokens'], 5.5) } : event));
  upstreams.get('openai')!.script({ sse: sseText(events, chat.terminator), chunks: 3 });
  const prompt = 'the words of a private prompt';
  const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gateway/fuzz-openai', messages: [{ role: 'user', content: prompt }], stream: true }),
  });
  const requestId = response.headers.get('x-gateway-request-id')!;
  const text = await response.text();
  assert.equal(response.status, 200);
  assert.match(text, /Hello/, 'the first content was delivered');
  assert.match(text, /upstream_error/, 'the stream ended with the error');
  await chargesOf(requestId);
  const lines = logged.filter((line) => line.requestId === requestId && line.msg === 'stream failed after it had started');
  assert.equal(lines.length, 1, JSON.stringify(logged.filter((line) => line.requestId === requestId)));
  const [line] = lines as { provider: string; upstreamModel: string; code: string; status: number; err: { type: string; message: string; body: string } }[];
  assert.deepEqual(
    { provider: line.provider, upstreamModel: line.upstreamModel, code: line.code, status: line.status, type: line.err.type },
    { provider: 'openai', upstreamModel: 'openai-model', code: 'upstream_error', status: 502, type: 'UpstreamBodyMismatch' },
  );
  assert.match(line.err.message, /completion_tokens must be integer/);
  assert.deepEqual(JSON.parse(line.err.body).usage, { prompt_tokens: 5, completion_tokens: 5.5, total_tokens: 7 }, 'the raw event as the provider sent it');
  const all = JSON.stringify(logged);
  for (const secret of [prompt, 'sk-fuzz', gateway.apiKey]) assert.ok(!all.includes(secret), `the log never holds ${secret}`);
});

/** A whole-body protocol of the embeddings or images API: its valid answer, and the request that asks for it. */
interface WholeCase {
  readonly kind: 'openai-embeddings' | 'gemini-embeddings' | 'openai-images' | 'imagen' | 'gpu-pool';
  readonly provider: { readonly kind: 'openai' | 'gemini' | 'openai-images' | 'gpu-pool'; readonly path: string };
  readonly api: '/v1/embeddings' | '/v1/images/generations';
  readonly body: Json;
}

const PNG = seededPng('fuzz').toString('base64');

const WHOLE_CASES: readonly WholeCase[] = [
  {
    kind: 'openai-embeddings',
    provider: { kind: 'openai', path: '/v1' },
    api: '/v1/embeddings',
    body: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.6, 0.8] }], model: 'm', usage: { prompt_tokens: 3, total_tokens: 3 } },
  },
  {
    kind: 'gemini-embeddings',
    provider: { kind: 'gemini', path: '' },
    api: '/v1/embeddings',
    body: { embedding: { values: [0.6, 0.8] }, usageMetadata: { promptTokenCount: 3 } },
  },
  {
    kind: 'openai-images',
    provider: { kind: 'openai-images', path: '/v1' },
    api: '/v1/images/generations',
    body: { created: 1, data: [{ b64_json: PNG, revised_prompt: 'a dot' }], size: '16x16', usage: { input_tokens: 5, output_tokens: 272, total_tokens: 277 } },
  },
  {
    kind: 'imagen',
    provider: { kind: 'gemini', path: '' },
    api: '/v1/images/generations',
    body: { predictions: [{ bytesBase64Encoded: PNG, mimeType: 'image/png' }] },
  },
  { kind: 'gpu-pool', provider: { kind: 'gpu-pool', path: '/v1' }, api: '/v1/images/generations', body: { data: [{ b64_json: PNG }] } },
];

describe('fuzzed embeddings and image answers', () => {
  let media: TestGateway;
  const replays = new Map<WholeCase['kind'], ReplayUpstream>();
  before(async () => {
    for (const protocol of WHOLE_CASES) replays.set(protocol.kind, await startReplayUpstream());
    const provider = (protocol: WholeCase) => ({
      id: protocol.kind,
      kind: protocol.provider.kind,
      base_url: `${replays.get(protocol.kind)!.origin}${protocol.provider.path}`,
      api_key_env: 'KEY',
    });
    const model = (protocol: WholeCase) =>
      protocol.api === '/v1/embeddings'
        ? embeddingModel(`gateway/fuzz-${protocol.kind}`, [embeddingEndpoint(protocol.kind, 'm')])
        : imageModel(`gateway/fuzz-${protocol.kind}`, [imageEndpoint('m', { provider: protocol.kind, limits: { max_images: 1, supported_sizes: ['16x16'] } })]);
    media = await startGateway({
      config: { providers: WHOLE_CASES.map(provider), models: WHOLE_CASES.map(model) },
      env: { KEY: 'sk-fuzz' },
      creditUsd: '100',
    });
  });
  after(async () => {
    await media?.close();
    await Promise.all([...replays.values()].map((upstream) => upstream.close()));
  });

  for (const protocol of WHOLE_CASES) {
    test(`${protocol.kind}: a 200 charged once, or a 502 charged nothing; never a 500`, async () => {
      const random = generator(protocol.kind.length * 7919);
      const outcomes = { delivered: 0, refused: 0 };
      const request = protocol.api === '/v1/embeddings' ? { input: 'hello' } : { prompt: 'a dot', size: '16x16', response_format: 'b64_json' };
      for (const fuzz of [{ name: 'the valid answer', answer: { json: protocol.body } }, ...wholeCases(protocol, random, PER_MODE)]) {
        replays.get(protocol.kind)!.script(fuzz.answer);
        const response = await fetch(`${media.baseUrl}${protocol.api}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${media.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: `gateway/fuzz-${protocol.kind}`, ...request }),
        });
        const text = await response.text();
        const charges = await chargesOf(response.headers.get('x-gateway-request-id') ?? '', media);
        if (response.status === 200) {
          outcomes.delivered++;
          assert.equal(charges.length, 1, `${fuzz.name}: charged once`);
        } else {
          outcomes.refused++;
          assert.equal(response.status, 502, `${fuzz.name}: ${response.status} ${text}`);
          assert.deepEqual(charges, [], `${fuzz.name}: nothing charged`);
        }
      }
      assert.ok(outcomes.delivered > 0 && outcomes.refused > 0, JSON.stringify(outcomes));
    });
  }
});
