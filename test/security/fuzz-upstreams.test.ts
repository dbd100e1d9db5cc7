/**
 * Property-based fuzzing of what upstreams answer (docs/security.md): every text protocol (OpenAI
 * chat, OpenAI responses, Anthropic messages, Gemini) through its simulator in test/simulators/,
 * asked by every text dialect, streamed or not, while the simulator injects a transport fault: any
 * status with the provider's error body, a connection reset, a malformed or truncated JSON body, or
 * an event stream cut, corrupted or ended by an error after any number of events. Every answer must
 * be the error envelope when it is an error and never a 500; a stream must end on a whole event; at
 * the end the process answers, its memory is bounded, and the ledger is exact. The seed is printed;
 * FUZZ_SEED replays a run.
 *
 * The faults are structural: the usage values inside a well-formed answer (fractional or negative
 * token counts) are the subject of the protocols' own wire validation and its tests, and are not
 * generated here.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { ProviderConfig } from '../../src/config/schema.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { startAnthropicSimulator } from '../simulators/anthropic.ts';
import { chatModelsConfig, type E2EProvider } from '../simulators/gateway-config.ts';
import { startGeminiSimulator } from '../simulators/gemini.ts';
import type { Behaviour, Simulator } from '../simulators/harness.ts';
import { startOpenAIChatSimulator } from '../simulators/openai-chat.ts';
import { startOpenAIResponsesSimulator } from '../simulators/openai-responses.ts';
import { assertAnswer, assertLedgerExact, FuzzFigures, fuzzSeed } from './fuzz-kit.ts';

const SEED = fuzzSeed();
const RSS_GROWTH_BOUND = 256 * 1024 * 1024;
const RUNS = 600;

type ProtocolSimulator = Simulator & { readonly baseUrl: string };

const KINDS: readonly ProviderConfig['kind'][] = ['openai', 'openai-responses', 'anthropic', 'gemini'];

const STATUSES = [400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504, 529];

const behaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  fc.constant({ kind: 'normal' as const }),
  fc.record({
    kind: fc.constant('status' as const),
    status: fc.constantFrom(...STATUSES),
    message: fc.option(fc.string({ maxLength: 60 }), { nil: undefined }),
    headers: fc.option(fc.constantFrom({ 'retry-after': '0' }, { 'retry-after': 'soon' }, { 'retry-after': '-5' }), { nil: undefined }),
  }),
  ...(['reset', 'malformed', 'truncate', 'stream-error'] as const).map((kind) =>
    fc.record({ kind: fc.constant(kind), afterEvents: fc.integer({ min: 0, max: 8 }) }),
  ),
);

/** A text request of each dialect, for the model `model`. */
function request(dialect: 'chat' | 'messages' | 'responses', model: string, stream: boolean, prompt: string): { path: string; body: unknown } {
  switch (dialect) {
    case 'chat':
      return { path: '/v1/chat/completions', body: { model, stream, max_tokens: 32, messages: [{ role: 'user', content: prompt }] } };
    case 'messages':
      return { path: '/v1/messages', body: { model, stream, max_tokens: 32, messages: [{ role: 'user', content: prompt }] } };
    case 'responses':
      return { path: '/v1/responses', body: { model, stream, max_output_tokens: 32, input: prompt } };
    default: {
      const unknown: never = dialect;
      throw new Error(`unknown dialect ${String(unknown)}`);
    }
  }
}

describe('upstream fuzzing', () => {
  let gateway: TestGateway;
  const simulators = new Map<ProviderConfig['kind'], ProtocolSimulator>();
  const figures = new FuzzFigures('upstream fuzz', SEED);

  before(async () => {
    simulators.set('openai', await startOpenAIChatSimulator({ apiKey: 'sk-openai' }));
    simulators.set('openai-responses', await startOpenAIResponsesSimulator({ apiKey: 'sk-openai-responses' }));
    simulators.set('anthropic', await startAnthropicSimulator({ apiKey: 'sk-anthropic' }));
    simulators.set('gemini', await startGeminiSimulator({ apiKey: 'sk-gemini' }));
    const provider = (kind: ProviderConfig['kind']): E2EProvider => ({
      id: `up-${kind}`,
      kind,
      baseUrl: simulators.get(kind)!.baseUrl,
      apiKeyEnv: `KEY_${kind.replace('-', '_').toUpperCase()}`,
      timeoutMs: 5_000,
    });
    gateway = await startGateway({
      config: chatModelsConfig(Object.fromEntries(KINDS.map((kind) => [`gateway/fuzz-${kind}`, [provider(kind)]]))),
      env: Object.fromEntries(KINDS.map((kind) => [`KEY_${kind.replace('-', '_').toUpperCase()}`, `sk-${kind}`])),
      creditUsd: '1000',
    });
    figures.rssStartAfterWarmUp = process.memoryUsage.rss();
  });
  after(async () => {
    await gateway?.close();
    for (const simulator of simulators.values()) await simulator.close();
  });

  test(`every protocol's faults, through every text dialect (${RUNS} cases)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...KINDS),
        fc.constantFrom('chat' as const, 'messages' as const, 'responses' as const),
        fc.boolean(),
        behaviour,
        fc.string({ minLength: 1, maxLength: 40 }),
        async (kind, dialect, stream, fault, prompt) => {
          const simulator = simulators.get(kind)!;
          // One fault for this case's first upstream call; any retry gets a normal answer.
          simulator.setDefault({ kind: 'normal' });
          simulator.enqueue(fault);
          const { path, body } = request(dialect, `gateway/fuzz-${kind}`, stream, prompt);
          const response = await fetch(`${gateway.baseUrl}${path}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          const text = await response.text();
          figures.count(response.status);
          const what = `${kind} via ${dialect}${stream ? ' (stream)' : ''} with ${JSON.stringify(fault)}`;
          assert.notEqual(response.status, 500, `${what}: ${text.slice(0, 500)}`);
          assertAnswer(response.status, response.headers, text, what);
          if (response.status === 200 && stream) assert.ok(text.endsWith('\n\n'), `${what}: the stream ends on a whole event: ${text.slice(-200)}`);
        },
      ),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });

  test('after every case: the process answers, its memory is bounded, and the ledger is exact', async (context) => {
    assert.equal((await fetch(`${gateway.baseUrl}/healthz`)).status, 200);
    const { charges, charged } = await assertLedgerExact(gateway);
    const line = figures.report(502, 503);
    context.diagnostic(`${line}; ${charges} charged requests, ${charged} pico-USD`);
    // 502 and 503 are what a client is told of an upstream failure; a 500 would be the gateway's own.
    assert.equal(figures.serverErrors(502, 503), 0);
    const growth = process.memoryUsage.rss() - figures.rssStartAfterWarmUp;
    assert.ok(growth < RSS_GROWTH_BOUND, `RSS grew by ${Math.round(growth / 1048576)} MiB`);
  });
});
