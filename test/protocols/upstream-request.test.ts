/**
 * What every HTTP protocol's request shares (src/protocols/upstream-request.ts): `extra_body`
 * options the route allowed reach the upstream body, where that protocol keeps such options.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildAnthropicRequest } from '../../src/protocols/anthropic/request.ts';
import { buildGeminiRequest } from '../../src/protocols/gemini/request.ts';
import { buildChatRequest } from '../../src/protocols/openai-chat/request.ts';
import { buildResponsesRequest } from '../../src/protocols/openai-responses/request.ts';
import { simulatorEndpoint } from '../simulators/endpoint.ts';
import { canonicalRequest } from './helpers.ts';

const extraBody = { cloud_a: { top_k: 5, temperature: 0.3 }, gpu_pool: { min_p: 0.1 } };

describe('extra_body options', () => {
  const topLevel = [
    ['openai-chat', buildChatRequest, 'openai'],
    ['openai-responses', buildResponsesRequest, 'openai-responses'],
    ['anthropic', buildAnthropicRequest, 'anthropic'],
  ] as const;
  for (const [name, build, kind] of topLevel) {
    test(`${name}: every allowed option is written at the top level of the body, over the derived value`, () => {
      const endpoint = simulatorEndpoint({ kind });
      const body = JSON.parse(build(canonicalRequest({ temperature: 1, extraBody }), endpoint, 'key', false).body);
      assert.equal(body.top_k, 5);
      assert.equal(body.min_p, 0.1);
      assert.equal(body.temperature, 0.3);
      assert.equal(body.cloud_a, undefined);
      const plain = JSON.parse(build(canonicalRequest({ temperature: 1 }), endpoint, 'key', false).body);
      assert.equal(plain.temperature, 1);
      assert.equal(plain.top_k, undefined);
    });
  }

  test('gemini: options go into generationConfig, created when the request set nothing there', () => {
    const endpoint = simulatorEndpoint({ kind: 'gemini' });
    const body = JSON.parse(buildGeminiRequest(canonicalRequest({ extraBody: { cloud_a: { topK: 7 } } }), endpoint, 'key', false).body);
    assert.deepEqual(body.generationConfig, { topK: 7 });
    assert.equal(body.topK, undefined);
    const withConfig = JSON.parse(buildGeminiRequest(canonicalRequest({ temperature: 0.5, extraBody: { cloud_a: { topK: 7 } } }), endpoint, 'key', false).body);
    assert.deepEqual(withConfig.generationConfig, { temperature: 0.5, topK: 7 });
  });
});
