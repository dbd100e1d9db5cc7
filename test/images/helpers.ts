/**
 * Shared pieces of the image tests: image models on the simulated provider, PNG checks, and the
 * request helpers.
 */
import assert from 'node:assert/strict';
import { decode } from 'fast-png';
import type { EndpointConfig, ModelConfig } from '../../src/config/schema.ts';
import type { TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';

export const IMAGE_CAPABILITIES = { image_generation: true, image_editing: true, image_mask: true };

export function imageEndpoint(model: string, overrides: Partial<EndpointConfig> = {}): EndpointConfig {
  return {
    provider: 'sim',
    model,
    supply: 'first_party',
    training_use: 'never',
    pricing: { unit: 'per_image', per_image: 0.04 },
    capabilities: IMAGE_CAPABILITIES,
    ...overrides,
  };
}

export function imageModel(id: string, endpoints: EndpointConfig[], overrides: Partial<ModelConfig> = {}): ModelConfig {
  return {
    id,
    name: id,
    owned_by: 'tests',
    category: 'IMAGE',
    type: 'image',
    input_modalities: ['text', 'image'],
    output_modalities: ['image'],
    endpoints,
    ...overrides,
  };
}

export const generate = (gateway: TestGateway, body: unknown, headers: Record<string, string> = {}) =>
  call(gateway.baseUrl, 'POST', '/v1/images/generations', { key: gateway.apiKey, json: body, headers });

export const editJson = (gateway: TestGateway, body: unknown, headers: Record<string, string> = {}) =>
  call(gateway.baseUrl, 'POST', '/v1/images/edits', { key: gateway.apiKey, json: body, headers });

/** Decodes a PNG and checks it is one, of this size when given. */
export function assertPng(bytes: Uint8Array, size?: { width: number; height: number }): void {
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  const png = decode(bytes);
  if (size) assert.deepEqual({ width: png.width, height: png.height }, size);
}
