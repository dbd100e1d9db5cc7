/**
 * Embeddings on the metered-call core, on both stores: the hold for the request's token bound, the
 * exact charge at the account rate, the whole hold released on every kind of upstream failure,
 * fallback to the next route before any answer, Idempotency-Key replays, the stored request with
 * its vectors file, and a key's tokens per minute counted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type OpenAI from 'openai';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { formatUsd, parseRateMultiplier } from '../../src/core/money.ts';
import { countTextTokens } from '../../src/tokens/tokenizer.ts';
import { eventually, flushRequestLog, ledger, newCharges, openai } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import type { Behaviour } from '../simulators/harness.ts';
import { startGeminiEmbeddingsSimulator, type GeminiEmbeddingsSimulator } from '../simulators/gemini-embeddings.ts';
import { startOpenAIEmbeddingsSimulator, type OpenAIEmbeddingsSimulator } from '../simulators/openai-embeddings.ts';
import { embed, embeddingEndpoint, embeddingModel } from './helpers.ts';

const KEY = 'sk-embeddings-upstream';
const price = (input_per_1m: number) => ({ unit: 'per_1m_tokens' as const, input_per_1m });
/** The account rate of these tests: every charge is the reference cost × 1.15, rounded up to the pico-USD. */
const RATE = parseRateMultiplier('1.15');
const atRate = (picos: bigint) => (picos * 115n + 99n) / 100n;

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`embeddings metering (${engine})`, () => {
    let openaiSim: OpenAIEmbeddingsSimulator;
    let geminiSim: GeminiEmbeddingsSimulator;
    let gateway: TestGateway;
    let client: OpenAI;

    before(async () => {
      openaiSim = await startOpenAIEmbeddingsSimulator({ apiKey: KEY, nativeDimensions: 32 });
      geminiSim = await startGeminiEmbeddingsSimulator({ apiKey: KEY, nativeDimensions: 32 });
      const config: GatewayConfig = {
        providers: [
          { id: 'oai', kind: 'openai', base_url: openaiSim.baseUrl, api_key_env: 'EMBED_KEY' },
          { id: 'gem', kind: 'gemini', base_url: geminiSim.baseUrl, api_key_env: 'EMBED_KEY' },
          { id: 'sim', kind: 'simulated' },
        ],
        models: [
          // 0.1 USD per million input tokens: 100,000 pico-USD a token.
          embeddingModel('gateway/oai-embed', [embeddingEndpoint('oai', 'text-embedding-3-small', { pricing: price(0.1) })]),
          // The cheaper OpenAI route is tried first; the dearer Gemini route is the fallback.
          embeddingModel('gateway/two-routes', [
            embeddingEndpoint('gem', 'gemini-embedding-001', { pricing: price(0.15) }),
            embeddingEndpoint('oai', 'text-embedding-3-large', { pricing: price(0.13) }),
          ]),
          embeddingModel('gateway/sim-embed', [embeddingEndpoint('sim', 'sim-embed', { pricing: price(0.02) })]),
          embeddingModel('gateway/gem-embed', [embeddingEndpoint('gem', 'gemini-embedding-001', { pricing: price(0.15) })]),
        ],
      };
      gateway = await startGateway({ engine, config, env: { EMBED_KEY: KEY }, creditUsd: '10' });
      await gateway.store.updateAccount(gateway.account.id, { rate: RATE });
      gateway.deps.authenticator.invalidate();
      client = openai(gateway);
    });
    after(async () => {
      await gateway.close();
      await Promise.all([openaiSim.close(), geminiSim.close()]);
    });

    test('the hold is the token bound (UTF-8 bytes) at the dearest route; the charge is the reported tokens at the served route', async () => {
      const input = ['Grüße aus Köln', 'embeddings are vectors'];
      const bound = input.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
      const tokens = input.reduce((sum, text) => sum + countTextTokens(text), 0);
      const before = await ledger(gateway);
      openaiSim.enqueue({ kind: 'delay', ms: 1500 });
      const seen = openaiSim.requests.length;
      const pending = client.embeddings.create({ model: 'gateway/two-routes', input, encoding_format: 'float' }).withResponse();
      // While the upstream works, the hold is the bound at the dearest route of the plan (0.15 $/M).
      await eventually(async () => assert.equal(openaiSim.requests.length, seen + 1));
      assert.equal((await ledger(gateway)).balance.reserved, atRate(BigInt(bound) * 150_000n));
      const { data, response } = await pending;
      const cost = atRate(BigInt(tokens) * 130_000n);
      assert.equal(data.usage.prompt_tokens, tokens);
      assert.equal(response.headers.get('x-gateway-cost-usd'), formatUsd(cost));
      assert.deepEqual(
        (await newCharges(gateway, before)).map((entry) => entry.amount),
        [cost],
      );
      const after = await ledger(gateway);
      assert.equal(after.balance.reserved, 0n);
      assert.equal(before.balance.balance - after.balance.balance, cost);
    });

    const failures: [string, Behaviour][] = [
      ['a 500', { kind: 'status', status: 500 }],
      ['a 429', { kind: 'status', status: 429, headers: { 'retry-after': '1' } }],
      ['a reset connection', { kind: 'reset', afterEvents: 0 }],
      ['a malformed body', { kind: 'malformed', afterEvents: 0 }],
    ];
    for (const [name, behaviour] of failures) {
      test(`${name} from the only route releases the whole hold, on OpenAI and on Gemini: nothing is charged`, async () => {
        for (const [simulator, model] of [
          [openaiSim, 'gateway/oai-embed'],
          [geminiSim, 'gateway/gem-embed'],
        ] as const) {
          await refundedAfter(simulator, model, behaviour);
        }
      });
    }

    test('an answer with a wrong-typed field from the only route releases the whole hold, on OpenAI and on Gemini: nothing is charged', async () => {
      for (const [simulator, model, faults] of [
        [
          openaiSim,
          'gateway/oai-embed',
          [
            ['usage', 'prompt_tokens', -50],
            ['usage', 'prompt_tokens', '5'],
            ['data', 0, 'index', 0.5],
            ['data', 1, 'embedding', { values: [1] }],
          ],
        ],
        [
          geminiSim,
          'gateway/gem-embed',
          [
            ['usageMetadata', 'promptTokenCount', 5.5],
            ['embeddings', 0, 'values', '0.1,0.2'],
          ],
        ],
      ] as const) {
        for (const fault of faults)
          await refundedAfter(simulator, model, { kind: 'retype', path: fault.slice(0, -1) as (string | number)[], value: fault.at(-1) });
      }
    });

    async function refundedAfter(simulator: { enqueue(behaviour: Behaviour): void }, model: string, behaviour: Behaviour) {
      {
        const before = await ledger(gateway);
        simulator.enqueue(behaviour);
        const response = await embed(gateway, { model, input: ['a', 'b'] });
        assert.ok(response.status >= 429 && response.status !== 500, `${response.status} ${response.text}`);
        assert.ok(response.body.error, response.text);
        assert.deepEqual(await newCharges(gateway, before), []);
        const after = await ledger(gateway);
        assert.equal(after.balance.reserved, 0n);
        assert.equal(after.balance.balance, before.balance.balance);
      }
    }

    test('an answer with a vector missing, or not of the dimensions asked, is a failure, not a charge', async () => {
      const before = await ledger(gateway);
      openaiSim.options.dropVector = true;
      try {
        assertError(await embed(gateway, { model: 'gateway/oai-embed', input: ['x', 'y'] }), { status: 502, type: 'api_error' });
      } finally {
        openaiSim.options.dropVector = false;
      }
      openaiSim.options.ignoreDimensions = true;
      try {
        assertError(await embed(gateway, { model: 'gateway/oai-embed', input: ['x', 'y'], dimensions: 16 }), { status: 502, type: 'api_error' });
      } finally {
        openaiSim.options.ignoreDimensions = false;
      }
      assert.deepEqual(await newCharges(gateway, before), []);
      assert.equal((await ledger(gateway)).balance.reserved, 0n);
    });

    for (const [name, fault] of [
      ['a failing route (503)', () => openaiSim.enqueue({ kind: 'status', status: 503 })],
      ['a route whose answer is short of a vector', () => (openaiSim.options.dropVector = true)],
      ['a route whose answer reports a fractional token count', () => openaiSim.enqueue({ kind: 'retype', path: ['usage', 'prompt_tokens'], value: 5.5 })],
    ] as const) {
      test(`${name} falls back to the next one before any answer; the charge is the serving route's`, async () => {
        const before = await ledger(gateway);
        fault();
        const gemini = geminiSim.requests.length;
        try {
          const { data, response } = await client.embeddings
            .create({ model: 'gateway/two-routes', input: ['fallback text', 'and another'], encoding_format: 'float' })
            .withResponse();
          assert.equal(geminiSim.requests.length, gemini + 1);
          assert.equal(data.data.length, 2);
          const cost = atRate(BigInt(data.usage.prompt_tokens) * 150_000n);
          assert.equal(response.headers.get('x-gateway-cost-usd'), formatUsd(cost));
          assert.deepEqual(
            (await newCharges(gateway, before)).map((entry) => entry.amount),
            [cost],
          );
          await flushRequestLog(gateway);
          const row = await gateway.store.getRequest(response.headers.get('x-gateway-request-id')!);
          assert.equal(row?.upstreamModel, 'gemini-embedding-001');
        } finally {
          openaiSim.options.dropVector = false;
        }
      });
    }

    test('an Idempotency-Key replays the answer and its cost header, charged once', async () => {
      const before = await ledger(gateway);
      const headers = { 'Idempotency-Key': `embed-${engine}-1` };
      const body = { model: 'gateway/sim-embed', input: ['replayed', 'twice'] };
      const first = await embed(gateway, body, headers);
      const second = await embed(gateway, body, headers);
      assert.equal(first.status, 200, first.text);
      assert.equal(second.status, 200, second.text);
      assert.equal(second.text, first.text);
      assert.equal(second.headers.get('x-gateway-cost-usd'), first.headers.get('x-gateway-cost-usd'));
      assert.equal((await newCharges(gateway, before)).length, 1);
      // The same key with another body is refused.
      assertError(await embed(gateway, { ...body, input: 'other' }, headers), { status: 409, type: 'invalid_request_error', code: 'idempotency_key_reused' });
    });

    test('the stored request: endpoint, usage, cost, and the vectors as a file', async () => {
      const input = ['stored one', 'stored two'];
      const response = await embed(gateway, { model: 'gateway/sim-embed', input });
      assert.equal(response.status, 200, response.text);
      const requestId = response.headers.get('x-gateway-request-id')!;
      await flushRequestLog(gateway);
      const stored = await call(gateway.baseUrl, 'GET', `/v1/outputs/${requestId}`, { key: gateway.apiKey });
      assert.equal(stored.status, 200, stored.text);
      assert.equal(stored.body.endpoint, '/v1/embeddings');
      assert.equal(stored.body.model, 'gateway/sim-embed');
      assert.equal(stored.body.usage.input_tokens, response.body.usage.prompt_tokens);
      assert.equal(stored.body.cost_usd, response.headers.get('x-gateway-cost-usd'));
      const files = Object.fromEntries(stored.body.outputs.map((file: { name: string; url: string }) => [file.name, file.url]));
      assert.deepEqual(Object.keys(files).sort(), ['embeddings.f32', 'output.json']);
      // Little-endian float32, the vectors one after another: the answer's vectors to float32 precision.
      const bytes = Buffer.from(await (await fetch(files['embeddings.f32'])).arrayBuffer());
      const answered: number[][] = response.body.data.map((datum: { embedding: number[] }) => datum.embedding);
      assert.equal(bytes.length, answered.length * answered[0].length * 4);
      answered.flat().forEach((value, at) => assert.ok(Math.abs(bytes.readFloatLE(at * 4) - value) < 1e-6));
      const output = (await (await fetch(files['output.json'])).json()) as { data: unknown };
      assert.deepEqual(output.data, [
        { object: 'embedding', index: 0, file: 'embeddings.f32', dimensions: 64 },
        { object: 'embedding', index: 1, file: 'embeddings.f32', dimensions: 64 },
      ]);
    });

    test("a key's tokens per minute count an embedding's tokens", async () => {
      const key = await gateway.createKey({ limits: { tokens_per_minute: 40 } });
      const input = Array.from({ length: 30 }, (_, index) => index + 1);
      assert.equal((await embed(gateway, { model: 'gateway/sim-embed', input }, {}, key)).status, 200);
      assertError(await embed(gateway, { model: 'gateway/sim-embed', input }, {}, key), { status: 429, type: 'rate_limit_error' });
    });
  });
}
