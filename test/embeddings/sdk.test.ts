/**
 * End to end with the official `openai` client over every embeddings protocol (OpenAI embeddings,
 * an OpenAI-compatible server that reports no usage and lists vectors out of order, Gemini
 * embedContent/batchEmbedContents, and the built-in simulated provider): float and base64, one and
 * many inputs, token-id inputs, `dimensions` allowed and refused, each charge exact to the pico-USD,
 * and the wire each upstream received.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type OpenAI from 'openai';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { formatUsd, usdToPicos } from '../../src/core/money.ts';
import { countTextTokens } from '../../src/tokens/tokenizer.ts';
import { ledger, newCharges, openai } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import type { Simulator } from '../simulators/harness.ts';
import { startGeminiEmbeddingsSimulator, type GeminiEmbeddingsSimulator } from '../simulators/gemini-embeddings.ts';
import { startOpenAIEmbeddingsSimulator, type OpenAIEmbeddingsSimulator } from '../simulators/openai-embeddings.ts';
import { assertUnitVectors, cosine, embeddingEndpoint, embeddingModel } from './helpers.ts';

const KEY = 'sk-embeddings-upstream';
/** 0.02 USD per million input tokens: 20,000 pico-USD a token. */
const PICOS_PER_TOKEN = 20_000n;

interface Upstream {
  readonly name: string;
  readonly model: string;
  /** The upstream simulator (the simulated provider has none). */
  readonly simulator?: () => Simulator;
  /** The size of a vector when `dimensions` is not sent. */
  readonly native: number;
  readonly tokenInputs: boolean;
  /** Whether the charge is the upstream's count (else the local tokenizer's, which the simulators use too). */
  readonly reportsUsage: boolean;
}

const texts = ['The cat sat on the mat.', 'A cat sat on a mat!', 'Quarterly revenue grew by nine percent.'];
const tokensOf = (inputs: readonly string[]) => inputs.reduce((sum, text) => sum + countTextTokens(text), 0);

describe('embeddings with the openai SDK over every protocol', () => {
  let openaiSim: OpenAIEmbeddingsSimulator;
  let compatSim: OpenAIEmbeddingsSimulator;
  let geminiSim: GeminiEmbeddingsSimulator;
  let gateway: TestGateway;
  let client: OpenAI;

  const upstreams: Upstream[] = [
    { name: 'OpenAI embeddings', model: 'gateway/oai-embed', simulator: () => openaiSim, native: 64, tokenInputs: true, reportsUsage: true },
    {
      name: 'an OpenAI-compatible server (no usage, vectors out of order)',
      model: 'gateway/compat-embed',
      simulator: () => compatSim,
      native: 48,
      tokenInputs: true,
      reportsUsage: false,
    },
    {
      name: 'Gemini embedContent/batchEmbedContents',
      model: 'gateway/gemini-embed',
      simulator: () => geminiSim,
      native: 64,
      tokenInputs: false,
      reportsUsage: true,
    },
    { name: 'the simulated provider', model: 'gateway/sim-embed', native: 64, tokenInputs: true, reportsUsage: true },
  ];

  before(async () => {
    openaiSim = await startOpenAIEmbeddingsSimulator({ apiKey: KEY, nativeDimensions: 64, fixedModels: ['ada-fixed'] });
    compatSim = await startOpenAIEmbeddingsSimulator({ apiKey: KEY, nativeDimensions: 48, reversed: true, noUsage: true });
    geminiSim = await startGeminiEmbeddingsSimulator({ apiKey: KEY, nativeDimensions: 64 });
    const config: GatewayConfig = {
      providers: [
        { id: 'oai', kind: 'openai', base_url: openaiSim.baseUrl, api_key_env: 'EMBED_KEY' },
        { id: 'compat', kind: 'openai', base_url: compatSim.baseUrl, api_key_env: 'EMBED_KEY' },
        { id: 'gem', kind: 'gemini', base_url: geminiSim.baseUrl, api_key_env: 'EMBED_KEY' },
        { id: 'sim', kind: 'simulated' },
      ],
      models: [
        embeddingModel('gateway/oai-embed', [embeddingEndpoint('oai', 'text-embedding-3-small')]),
        embeddingModel('gateway/compat-embed', [embeddingEndpoint('compat', 'bge-m3', { capabilities: { dimensions: { minimum: 8, maximum: 48 } } })]),
        embeddingModel('gateway/gemini-embed', [
          embeddingEndpoint('gem', 'gemini-embedding-001', { limits: { max_input_tokens: 10_000, max_batch_inputs: 2048 } }),
        ]),
        embeddingModel('gateway/sim-embed', [embeddingEndpoint('sim', 'sim-embed')]),
        // A model whose vectors cannot be shortened.
        embeddingModel('gateway/oai-fixed', [embeddingEndpoint('oai', 'ada-fixed', { capabilities: {} })]),
      ],
    };
    gateway = await startGateway({ config, env: { EMBED_KEY: KEY }, creditUsd: '10' });
    client = openai(gateway);
  });
  after(async () => {
    await gateway.close();
    await Promise.all([openaiSim.close(), compatSim.close(), geminiSim.close()]);
  });

  /** The request, its answer, and the charge it made: exactly `tokens` at the route's rate, nothing held. */
  async function charged<T>(tokens: number, run: () => Promise<{ data: T; response: Response }>): Promise<T> {
    const before = await ledger(gateway);
    const { data, response } = await run();
    const cost = BigInt(tokens) * PICOS_PER_TOKEN;
    assert.equal(response.headers.get('x-gateway-cost-usd'), formatUsd(cost));
    assert.deepEqual(
      (await newCharges(gateway, before)).map((entry) => entry.amount),
      [cost],
    );
    assert.equal((await ledger(gateway)).balance.reserved, 0n);
    return data;
  }

  for (const upstream of upstreams) {
    describe(upstream.name, () => {
      test('one input, float: a unit vector of the native size, usage and charge exact', async () => {
        const tokens = tokensOf([texts[0]]);
        const answer = await charged(tokens, () =>
          client.embeddings.create({ model: upstream.model, input: texts[0], encoding_format: 'float' }).withResponse(),
        );
        assert.equal(answer.object, 'list');
        assert.equal(answer.model, upstream.model);
        assert.deepEqual(answer.usage, { prompt_tokens: tokens, total_tokens: tokens });
        assert.deepEqual(
          answer.data.map((datum) => [datum.object, datum.index]),
          [['embedding', 0]],
        );
        assertUnitVectors([answer.data[0].embedding], upstream.native);
      });

      test("many inputs, the SDK's default base64: decoded to the float answer's vectors, in the inputs' order", async () => {
        const tokens = tokensOf(texts);
        const decoded = await charged(tokens, () => client.embeddings.create({ model: upstream.model, input: texts }).withResponse());
        const floats = await client.embeddings.create({ model: upstream.model, input: texts, encoding_format: 'float' });
        assert.deepEqual(
          decoded.data.map((datum) => datum.index),
          [0, 1, 2],
        );
        assertUnitVectors(
          decoded.data.map((datum) => datum.embedding),
          upstream.native,
        );
        decoded.data.forEach((datum, index) => {
          // base64 is float32: the same vector to float32 precision.
          datum.embedding.forEach((value, at) => assert.ok(Math.abs(value - floats.data[index].embedding[at]) < 1e-6));
        });
        // Each vector is the one its input gets alone, and similar texts are closer than unrelated ones.
        for (const [index, text] of texts.entries()) {
          const alone = await client.embeddings.create({ model: upstream.model, input: text, encoding_format: 'float' });
          assert.deepEqual(alone.data[0].embedding, floats.data[index].embedding);
        }
        const [cat, similarCat, revenue] = floats.data.map((datum) => datum.embedding);
        assert.ok(cosine(cat, similarCat) > cosine(cat, revenue));
        assert.ok(cosine(cat, similarCat) < 0.9999);
      });

      test('token-id inputs: one array, and arrays of arrays', async () => {
        if (!upstream.tokenInputs) {
          for (const input of [
            [1, 2, 3],
            [[1, 2], [3]],
          ]) {
            await assert.rejects(client.embeddings.create({ model: upstream.model, input }), (error: InstanceType<typeof OpenAI.APIError>) => {
              assert.equal(error.status, 400);
              assert.equal(error.code, 'unsupported_parameter');
              assert.equal(error.param, Array.isArray(input[0]) ? 'input[0]' : 'input');
              return true;
            });
          }
          return;
        }
        const one = await charged(3, () => client.embeddings.create({ model: upstream.model, input: [9906, 1917, 0] }).withResponse());
        assert.equal(one.data.length, 1);
        const many = await charged(6, () =>
          client.embeddings.create({ model: upstream.model, input: [[9906, 1917], [9906, 1917, 0], [42]], encoding_format: 'float' }).withResponse(),
        );
        assertUnitVectors(
          many.data.map((datum) => datum.embedding),
          upstream.native,
        );
      });

      test('dimensions within the range shortens the vectors', async () => {
        const answer = await client.embeddings.create({ model: upstream.model, input: texts.slice(0, 2), dimensions: 16 });
        assertUnitVectors(
          answer.data.map((datum) => datum.embedding),
          16,
        );
        const upstreamBody = upstream.simulator?.().requests.at(-1)?.body;
        if (upstream.model === 'gateway/gemini-embed') assert.equal(upstreamBody.requests[0].outputDimensionality, 16);
        else if (upstreamBody) assert.equal(upstreamBody.dimensions, 16);
      });
    });
  }

  test('dimensions on a model that cannot shorten is refused before any upstream call', async () => {
    const calls = openaiSim.requests.length;
    await assert.rejects(
      client.embeddings.create({ model: 'gateway/oai-fixed', input: 'a', dimensions: 16 }),
      (error: InstanceType<typeof OpenAI.APIError>) => {
        assert.equal(error.status, 400);
        assert.equal(error.code, 'unsupported_parameter');
        assert.equal(error.param, 'dimensions');
        return true;
      },
    );
    assert.equal(openaiSim.requests.length, calls);
    const plain = await client.embeddings.create({ model: 'gateway/oai-fixed', input: 'a' });
    assert.equal(plain.data[0].embedding.length, 64);
  });

  test('the wire: OpenAI gets the model and the inputs (numbers, its default encoding); Gemini gets embedContent for one text, batches of 100 for more', async () => {
    await client.embeddings.create({ model: 'gateway/oai-embed', input: ['x', 'y'], user: 'end-user-7' });
    assert.deepEqual(openaiSim.requests.at(-1)!.body, { model: 'text-embedding-3-small', input: ['x', 'y'], user: 'end-user-7' });
    assert.equal(openaiSim.requests.at(-1)!.headers.authorization, `Bearer ${KEY}`);

    const before = geminiSim.requests.length;
    await client.embeddings.create({ model: 'gateway/gemini-embed', input: 'one text' });
    const inputs = Array.from({ length: 150 }, (_, index) => `text number ${index}`);
    const answer = await charged(tokensOf(inputs), () => client.embeddings.create({ model: 'gateway/gemini-embed', input: inputs }).withResponse());
    const calls = geminiSim.requests.slice(before);
    assert.deepEqual(
      calls.map((request) => request.path),
      [
        '/v1beta/models/gemini-embedding-001:embedContent',
        '/v1beta/models/gemini-embedding-001:batchEmbedContents',
        '/v1beta/models/gemini-embedding-001:batchEmbedContents',
      ],
    );
    assert.deepEqual(calls[0].body, { content: { parts: [{ text: 'one text' }] } });
    assert.deepEqual(
      calls.slice(1).map((request) => request.body.requests.length),
      [100, 50],
    );
    assert.equal(calls[1].body.requests[0].model, 'models/gemini-embedding-001');
    assert.equal(answer.data.length, 150);
    assert.deepEqual(answer.data[120].embedding, (await client.embeddings.create({ model: 'gateway/gemini-embed', input: inputs[120] })).data[0].embedding);
  });

  test('`user` is refused on Gemini, whose wire has no end-user id', async () => {
    await assert.rejects(client.embeddings.create({ model: 'gateway/gemini-embed', input: 'a', user: 'u' }), (error: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(error.status, 400);
      assert.equal(error.code, 'unsupported_parameter');
      assert.equal(error.param, 'user');
      return true;
    });
  });

  test('an upstream with no usage is charged the local tokenizer count (docs/embeddings.md, "Metering")', async () => {
    const input = ['Some words to count locally.', 'And a few more.'];
    const tokens = tokensOf(input);
    assert.equal(usdToPicos('0.00000002') * BigInt(tokens), BigInt(tokens) * PICOS_PER_TOKEN);
    const answer = await charged(tokens, () => client.embeddings.create({ model: 'gateway/compat-embed', input }).withResponse());
    assert.equal(answer.usage.prompt_tokens, tokens);
    assert.equal(compatSim.requests.at(-1)!.body.input.length, 2);
  });
});
