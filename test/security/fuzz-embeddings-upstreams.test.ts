/**
 * Property-based fuzzing of what embeddings upstreams answer (docs/security.md): OpenAI embeddings
 * and Gemini embedContent/batchEmbedContents through their simulators, asked for one to 150 inputs
 * (several Gemini batch calls), as text or token ids, float or base64, with or without
 * `dimensions`, while the simulator injects one transport fault (any status with the provider's
 * error body, a reset connection, a malformed or truncated body, a slow answer) or answers short
 * of a vector. No answer may be a 500, every error is the envelope, every success has one vector
 * per input; at the end the process answers and the ledger is exact. The seed is printed;
 * FUZZ_SEED replays a run.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { embeddingEndpoint, embeddingModel } from '../embeddings/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { startGeminiEmbeddingsSimulator, type GeminiEmbeddingsSimulator } from '../simulators/gemini-embeddings.ts';
import type { Behaviour } from '../simulators/harness.ts';
import { startOpenAIEmbeddingsSimulator, type OpenAIEmbeddingsSimulator } from '../simulators/openai-embeddings.ts';
import { assertAnswer, assertLedgerExact, FuzzFigures, fuzzSeed } from './fuzz-kit.ts';

const SEED = fuzzSeed();
const RUNS = 300;
const KEY = 'sk-fuzz-embeddings';
const STATUSES = [400, 401, 403, 404, 408, 413, 422, 429, 500, 502, 503, 504];

const fault: fc.Arbitrary<Behaviour | 'short'> = fc.oneof(
  fc.constant({ kind: 'normal' as const }),
  fc.constant('short' as const),
  fc.record({
    kind: fc.constant('status' as const),
    status: fc.constantFrom(...STATUSES),
    message: fc.option(fc.string({ maxLength: 60 }), { nil: undefined }),
    headers: fc.option(fc.constantFrom({ 'retry-after': '0' }, { 'retry-after': 'soon' }), { nil: undefined }),
  }),
  ...(['reset', 'malformed', 'truncate'] as const).map((kind) => fc.constant({ kind, afterEvents: 0 })),
  fc.constant({ kind: 'delay' as const, ms: 20 }),
);

const texts = fc.array(fc.string({ minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 150 });
const tokenInputs = fc.array(fc.array(fc.integer({ min: 0, max: 200_000 }), { minLength: 1, maxLength: 20 }), { minLength: 1, maxLength: 20 });

describe('embeddings upstream fuzzing', () => {
  let openaiSim: OpenAIEmbeddingsSimulator;
  let geminiSim: GeminiEmbeddingsSimulator;
  let gateway: TestGateway;
  const figures = new FuzzFigures('embeddings upstream fuzz', SEED);

  before(async () => {
    openaiSim = await startOpenAIEmbeddingsSimulator({ apiKey: KEY, nativeDimensions: 32 });
    geminiSim = await startGeminiEmbeddingsSimulator({ apiKey: KEY, nativeDimensions: 32 });
    const limits = { max_input_tokens: 100_000, max_batch_inputs: 2048 };
    const config: GatewayConfig = {
      providers: [
        { id: 'oai', kind: 'openai', base_url: openaiSim.baseUrl, api_key_env: 'FUZZ_KEY', timeout_ms: 5_000 },
        { id: 'gem', kind: 'gemini', base_url: geminiSim.baseUrl, api_key_env: 'FUZZ_KEY', timeout_ms: 5_000 },
      ],
      models: [
        embeddingModel('gateway/fuzz-openai', [embeddingEndpoint('oai', 'text-embedding-3-small', { limits })]),
        embeddingModel('gateway/fuzz-gemini', [embeddingEndpoint('gem', 'gemini-embedding-001', { limits })]),
      ],
    };
    gateway = await startGateway({ config, env: { FUZZ_KEY: KEY }, creditUsd: '1000' });
    figures.rssStartAfterWarmUp = process.memoryUsage.rss();
  });
  after(async () => {
    await gateway?.close();
    await Promise.all([openaiSim?.close(), geminiSim?.close()]);
  });

  test(`every embeddings protocol's faults (${RUNS} cases)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('openai' as const, 'gemini' as const),
        fc.oneof(texts, tokenInputs),
        fc.constantFrom('float' as const, 'base64' as const),
        fc.option(fc.integer({ min: 8, max: 64 }), { nil: undefined }),
        fault,
        async (kind, input, encoding, dimensions, injected) => {
          const simulator = kind === 'openai' ? openaiSim : geminiSim;
          // Gemini takes no token ids: that request is refused before any upstream call, so no fault is queued for it.
          const refusedEarly = kind === 'gemini' && typeof input[0] !== 'string';
          if (injected === 'short') openaiSim.options.dropVector = true;
          else if (!refusedEarly) simulator.enqueue(injected);
          try {
            const response = await fetch(`${gateway.baseUrl}/v1/embeddings`, {
              method: 'POST',
              headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json' },
              body: JSON.stringify({ model: `gateway/fuzz-${kind}`, input, encoding_format: encoding, ...(dimensions === undefined ? {} : { dimensions }) }),
            });
            const text = await response.text();
            figures.count(response.status);
            const what = `${kind} with ${JSON.stringify(injected)}, ${input.length} inputs`;
            assert.notEqual(response.status, 500, `${what}: ${text.slice(0, 500)}`);
            assertAnswer(response.status, response.headers, text, what);
            if (response.status === 200) assert.equal(JSON.parse(text).data.length, input.length, what);
            if (refusedEarly) assert.equal(response.status, 400, what);
          } finally {
            openaiSim.options.dropVector = false;
          }
        },
      ),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });

  test('after every case: the process answers and the ledger is exact', async (context) => {
    assert.equal((await fetch(`${gateway.baseUrl}/healthz`)).status, 200);
    const { charges, charged } = await assertLedgerExact(gateway);
    context.diagnostic(`${figures.report(502, 503)}; ${charges} charged requests, ${charged} pico-USD`);
    assert.equal(figures.serverErrors(502, 503), 0);
    assert.ok(charges > 0, 'some cases succeeded');
  });
});
