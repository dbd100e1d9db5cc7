/**
 * Embeddings through the clients applications use besides the openai SDK: the AI SDK's `embed` and
 * `embedMany` (`ai` with `@ai-sdk/openai`) and LangChain's `OpenAIEmbeddings` (`@langchain/openai`),
 * against the demo catalog's embeddings model. Each gets the gateway's vectors, in order, and each
 * request is charged exactly its tokens.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { OpenAIEmbeddings } from '@langchain/openai';
import { embed as aiEmbed, embedMany } from 'ai';
import { usdToPicos } from '../../src/core/money.ts';
import { countTextTokens } from '../../src/tokens/tokenizer.ts';
import { ledger, newCharges, openai } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertUnitVectors } from './helpers.ts';

/** The demo catalog's embeddings model: 0.02 USD per million input tokens, 256 dimensions, shortened down to 32. */
const MODEL = 'gateway/atlas-embed-1';
const PICOS_PER_TOKEN = usdToPicos('0.02') / 1_000_000n;

const documents = ['Gateways meter every call.', 'Embeddings turn text into vectors.', 'A vector has a direction.'];

describe('embeddings with the AI SDK and LangChain', () => {
  let gateway: TestGateway;
  /** The vectors the openai SDK gets, as the reference. */
  let reference: number[][];

  before(async () => {
    gateway = await startGateway({ creditUsd: '1' });
    const answer = await openai(gateway).embeddings.create({ model: MODEL, input: documents, encoding_format: 'float' });
    reference = answer.data.map((datum) => datum.embedding);
  });
  after(() => gateway.close());

  /** Runs the client call and checks that it was charged exactly the texts' tokens, once. */
  async function chargedFor<T>(texts: readonly string[], run: () => Promise<T>): Promise<T> {
    const before = await ledger(gateway);
    const result = await run();
    const tokens = texts.reduce((sum, text) => sum + countTextTokens(text), 0);
    assert.deepEqual(
      (await newCharges(gateway, before)).map((entry) => entry.amount),
      [BigInt(tokens) * PICOS_PER_TOKEN],
    );
    return result;
  }

  const closeTo = (actual: readonly number[], expected: readonly number[]) => {
    assert.equal(actual.length, expected.length);
    actual.forEach((value, index) => assert.ok(Math.abs(value - expected[index]) < 1e-6));
  };

  test('AI SDK embed: one value, its vector and its token usage', async () => {
    const provider = createOpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: gateway.apiKey });
    const result = await chargedFor([documents[0]], () => aiEmbed({ model: provider.embedding(MODEL), value: documents[0], maxRetries: 0 }));
    closeTo(result.embedding, reference[0]);
    assert.equal(result.usage.tokens, countTextTokens(documents[0]));
  });

  test('AI SDK embedMany: every value in order, and shortened vectors through providerOptions', async () => {
    const provider = createOpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: gateway.apiKey });
    const result = await chargedFor(documents, () => embedMany({ model: provider.embedding(MODEL), values: documents, maxRetries: 0 }));
    result.embeddings.forEach((vector, index) => closeTo(vector, reference[index]));
    const short = await embedMany({
      model: provider.embedding(MODEL),
      values: documents,
      maxRetries: 0,
      providerOptions: { openai: { dimensions: 32 } },
    });
    assertUnitVectors(short.embeddings, 32);
  });

  test('LangChain OpenAIEmbeddings: embedDocuments and embedQuery, with dimensions', async () => {
    const embeddings = new OpenAIEmbeddings({
      model: MODEL,
      apiKey: gateway.apiKey,
      configuration: { baseURL: `${gateway.baseUrl}/v1` },
      maxRetries: 0,
    });
    const vectors = await chargedFor(documents, () => embeddings.embedDocuments(documents));
    vectors.forEach((vector, index) => closeTo(vector, reference[index]));
    const query = await chargedFor([documents[1]], () => embeddings.embedQuery(documents[1]));
    closeTo(query, reference[1]);
    const shortened = new OpenAIEmbeddings({
      model: MODEL,
      dimensions: 64,
      apiKey: gateway.apiKey,
      configuration: { baseURL: `${gateway.baseUrl}/v1` },
      maxRetries: 0,
    });
    assertUnitVectors(await shortened.embedDocuments(documents), 64);
  });
});
