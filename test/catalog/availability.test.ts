/**
 * `available` means a route the gateway can call exists now, for this view: an enabled endpoint
 * the owner may use, on a provider kind with a protocol for the model's category. The predicate
 * here stands for the gateway's (text generation on the chat provider kinds); the real one is
 * checked over HTTP in routes.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCatalog } from '../../src/catalog/catalog.ts';
import type { Servable } from '../../src/catalog/types.ts';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { CONSENT, config, endpoint, model, rowOf } from './builders.ts';

const chatOnly: Servable = (kind, category) => category === 'LLM' && kind === 'simulated';

const withImagesProvider = (models: GatewayConfig['models']): GatewayConfig => {
  const base = config(models);
  return { ...base, providers: [...base.providers, { id: 'images', kind: 'openai-images', base_url: 'http://127.0.0.1:9/v1' }] };
};

const tokens = { unit: 'per_1m_tokens' as const, input_per_1m: 1, output_per_1m: 2 };

const catalog = buildCatalog(
  withImagesProvider([
    model('gateway/llm-on-images', [endpoint({ provider: 'images', pricing: tokens })]),
    model('gateway/llm-somewhere', [endpoint({ provider: 'images', pricing: tokens }), endpoint({ pricing: tokens })]),
    model('gateway/picture', [endpoint({ pricing: { unit: 'per_image', per_image: 0.04 } })], {
      category: 'IMAGE',
      type: 'image',
      output_modalities: ['image'],
    }),
    model('gateway/callable-with-community', [
      endpoint({ provider: 'images', pricing: tokens }),
      endpoint({ provider: 'p2', supply: 'community', pricing: tokens }),
    ]),
  ]),
  { servable: chatOnly },
);

describe('available', () => {
  test('an LLM whose only endpoint is on a provider kind without a chat protocol is listed, not available', () => {
    const row = rowOf(catalog, 'gateway/llm-on-images', CONSENT.none);
    assert.equal(row.available, false);
    assert.equal(row.supply, 'first_party');
    assert.deepEqual(row.pricing, tokens);
  });

  test('one callable endpoint is enough', () => {
    assert.equal(rowOf(catalog, 'gateway/llm-somewhere', CONSENT.none).available, true);
  });

  test('a category the gateway cannot serve yet is listed, not available', () => {
    const row = rowOf(catalog, 'gateway/picture', CONSENT.none);
    assert.equal(row.available, false);
    assert.deepEqual(row.pricing, { unit: 'per_image', per_image: 0.04 });
  });

  test('availability follows the view: the only callable endpoint may need consent', () => {
    assert.equal(rowOf(catalog, 'gateway/callable-with-community', CONSENT.none).available, false);
    assert.equal(rowOf(catalog, 'gateway/callable-with-community', CONSENT.community).available, true);
  });

  test('without a predicate every route counts as callable', () => {
    const names = buildCatalog(withImagesProvider([model('gateway/llm-on-images', [endpoint({ provider: 'images', pricing: tokens })])]));
    assert.equal(rowOf(names, 'gateway/llm-on-images').available, true);
  });
});
