/**
 * Shared pieces of the embeddings tests: embedding models and routes, the request helper, and the
 * vector checks every protocol's answer must pass.
 */
import assert from 'node:assert/strict';
import type { EndpointConfig, ModelConfig } from '../../src/config/schema.ts';
import type { TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';

/** One embedding route; fields not given take plain defaults (0.02 $/M input tokens, shortening 8..64). */
export function embeddingEndpoint(provider: string, model: string, overrides: Partial<EndpointConfig> = {}): EndpointConfig {
  return {
    provider,
    model,
    supply: 'first_party',
    training_use: 'never',
    pricing: { unit: 'per_1m_tokens', input_per_1m: 0.02 },
    capabilities: { dimensions: { minimum: 8, maximum: 64 } },
    limits: { max_input_tokens: 10_000, max_batch_inputs: 100 },
    ...overrides,
  };
}

export function embeddingModel(id: string, endpoints: EndpointConfig[], overrides: Partial<ModelConfig> = {}): ModelConfig {
  return {
    id,
    name: id,
    owned_by: 'tests',
    category: 'EMBEDDING',
    type: 'embedding',
    input_modalities: ['text'],
    output_modalities: ['embedding'],
    endpoints,
    ...overrides,
  };
}

export const embed = (gateway: TestGateway, body: unknown, headers: Record<string, string> = {}, key = gateway.apiKey) =>
  call(gateway.baseUrl, 'POST', '/v1/embeddings', { key, json: body, headers });

export function norm(vector: readonly number[]): number {
  return Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
}

export function cosine(a: readonly number[], b: readonly number[]): number {
  return a.reduce((sum, value, index) => sum + value * b[index], 0) / (norm(a) * norm(b));
}

/** Unit vectors of this size, pairwise different. */
export function assertUnitVectors(vectors: readonly (readonly number[])[], size: number): void {
  for (const vector of vectors) {
    assert.equal(vector.length, size);
    assert.ok(Math.abs(norm(vector) - 1) < 1e-5, `a unit vector (norm ${norm(vector)})`);
  }
  for (let i = 0; i < vectors.length; i++) for (let j = i + 1; j < vectors.length; j++) assert.notDeepEqual(vectors[i], vectors[j]);
}
