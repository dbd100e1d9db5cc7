/**
 * The embeddings protocols' answers, read strictly: vectors placed by index, every input covered
 * exactly once, numbers only, the reported tokens a count or absent (anything else is a malformed
 * answer: docs/protocols.md, "Validated upstream bodies"); and the simulated provider's vectors
 * (deterministic, unit, shaped by the text).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GatewayError } from '../../../src/core/errors.ts';
import { float32Bytes } from '../../../src/dialects/embeddings/encode.ts';
import { parseBatchEmbedContents, parseEmbedContent } from '../../../src/protocols/gemini-embeddings/response.ts';
import { parseEmbeddingsResponse } from '../../../src/protocols/openai-embeddings/response.ts';
import { simulatedVector } from '../../../src/protocols/simulated/embeddings.ts';

const malformed = (run: () => unknown) =>
  assert.throws(run, (error: unknown) => error instanceof GatewayError && error.code === 'upstream_error' && error.status === 502);

describe('OpenAI embeddings answers', () => {
  const datum = (index: unknown, embedding: unknown = [0.6, 0.8]) => ({ object: 'embedding', index, embedding });

  test('vectors are placed by index; usage is the reported prompt tokens', () => {
    const result = parseEmbeddingsResponse({ data: [datum(1, [1, 0]), datum(0, [0, 1])], model: 'm-2', usage: { prompt_tokens: 7 } }, 2, 'm');
    assert.deepEqual(result, {
      vectors: [
        [0, 1],
        [1, 0],
      ],
      providerModel: 'm-2',
      inputTokens: 7,
    });
  });

  test('a base64 vector is read as little-endian float32; no usage leaves the count unreported', () => {
    const result = parseEmbeddingsResponse({ data: [datum(0, float32Bytes([0.5, -0.25]).toString('base64'))] }, 1, 'm');
    assert.deepEqual(result, { vectors: [[0.5, -0.25]], providerModel: 'm' });
    assert.equal(parseEmbeddingsResponse({ data: [datum(0)], usage: { prompt_tokens: null } }, 1, 'm').inputTokens, undefined);
  });

  test('a reported count that is not a non-negative integer is malformed, not ignored', () => {
    for (const count of [-1, 5.5, '5', {}]) malformed(() => parseEmbeddingsResponse({ data: [datum(0)], usage: { prompt_tokens: count } }, 1, 'm'));
    malformed(() => parseEmbeddingsResponse({ data: [datum(0)], model: 7 }, 1, 'm'));
  });

  test('a missing, repeated or out-of-range index, a count other than the inputs, or a vector that is not numbers is malformed', () => {
    malformed(() => parseEmbeddingsResponse({ data: [datum(0), datum(0)] }, 2, 'm'));
    malformed(() => parseEmbeddingsResponse({ data: [datum(0), datum(2)] }, 2, 'm'));
    malformed(() => parseEmbeddingsResponse({ data: [datum(undefined), datum(1)] }, 2, 'm'));
    malformed(() => parseEmbeddingsResponse({ data: [datum(0)] }, 2, 'm'));
    malformed(() => parseEmbeddingsResponse({ data: [datum(0, ['0.5'])] }, 1, 'm'));
    malformed(() => parseEmbeddingsResponse({ data: [datum(0, [])] }, 1, 'm'));
    malformed(() => parseEmbeddingsResponse({ data: [datum(0, 'AAA')] }, 1, 'm'));
    malformed(() => parseEmbeddingsResponse({ object: 'list' }, 1, 'm'));
    malformed(() => parseEmbeddingsResponse(null, 1, 'm'));
  });
});

describe('Gemini embeddings answers', () => {
  test('embedContent and batchEmbedContents, with and without usage metadata', () => {
    assert.deepEqual(parseEmbedContent({ embedding: { values: [1, 0] }, usageMetadata: { promptTokenCount: 3 } }), { vectors: [[1, 0]], promptTokens: 3 });
    assert.deepEqual(parseBatchEmbedContents({ embeddings: [{ values: [1] }, { values: [2] }] }, 2), { vectors: [[1], [2]] });
  });

  test('an embedding without values, or a batch answer short of its requests, is malformed', () => {
    malformed(() => parseEmbedContent({ embedding: {} }));
    malformed(() => parseEmbedContent({}));
    malformed(() => parseBatchEmbedContents({ embeddings: [{ values: [1] }] }, 2));
    malformed(() => parseBatchEmbedContents({ embeddings: [{ values: [1] }, { values: 'x' }] }, 2));
  });

  test('a reported count that is not a non-negative integer is malformed, not ignored', () => {
    for (const count of [-1, 5.5, '5', []]) {
      malformed(() => parseEmbedContent({ embedding: { values: [1] }, usageMetadata: { promptTokenCount: count } }));
      malformed(() => parseBatchEmbedContents({ embeddings: [{ values: [1] }], usageMetadata: { promptTokenCount: count } }, 1));
    }
  });
});

describe('the simulated provider’s vectors', () => {
  const norm = (vector: readonly number[]) => Math.hypot(...vector);
  const dot = (a: readonly number[], b: readonly number[]) => a.reduce((sum, value, index) => sum + value * b[index], 0);

  test('deterministic unit vectors of the size asked, for text and token ids alike', () => {
    for (const input of [
      { kind: 'text', text: 'Hello, world' } as const,
      { kind: 'tokens', tokens: [1, 2, 3] } as const,
      { kind: 'text', text: '!!!' } as const,
    ]) {
      const vector = simulatedVector(input, 48);
      assert.equal(vector.length, 48);
      assert.ok(Math.abs(norm(vector) - 1) < 1e-12);
      assert.deepEqual(simulatedVector(input, 48), vector);
    }
  });

  test('texts that share words are closer than unrelated ones, and not equal; case does not matter', () => {
    const vector = (text: string) => simulatedVector({ kind: 'text', text }, 256);
    const cat = vector('the cat sat on the mat');
    assert.ok(dot(cat, vector('a cat sat on a mat')) > dot(cat, vector('interest rates rose again')) + 0.3);
    assert.notDeepEqual(cat, vector('a cat sat on a mat'));
    assert.deepEqual(cat, vector('The Cat sat on the mat'));
  });
});
