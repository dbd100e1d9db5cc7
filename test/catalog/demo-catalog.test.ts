/**
 * The built-in demo catalog loads with the real loader and derives rows that show each rule the
 * catalog implements (values worked out by hand from src/config/demo-catalog.yaml).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { buildCatalog } from '../../src/catalog/catalog.ts';
import { ModelList } from '../../src/catalog/schemas.ts';
import { DEMO_CONFIG_PATH, loadConfigFile } from '../../src/config/load.ts';
import { CONSENT, rowOf } from './builders.ts';

const demo = loadConfigFile(DEMO_CONFIG_PATH);
const catalog = buildCatalog(demo);

describe('demo catalog', () => {
  test('runs only on the built-in simulated provider', () => {
    assert.ok(demo.providers.every((provider) => provider.kind === 'simulated'));
    assert.ok(demo.models.every((entry) => entry.id.startsWith('gateway/')));
  });

  test('a new owner (no consent) sees neither the community-only nor the training-only model', () => {
    const ids = catalog.listModels(CONSENT.none, null).map((row) => row.id);
    assert.ok(!ids.includes('gateway/ember-3-1-8b'));
    assert.ok(!ids.includes('gateway/meridian-2'));
    assert.equal(catalog.listModels(CONSENT.all, null).length, demo.models.length);
  });

  test('a curated third-party id resolves to the model and leads its aliases', () => {
    assert.equal(catalog.resolve('atlas-labs/atlas-4.5'), 'gateway/atlas-4-5');
    assert.deepEqual(rowOf(catalog, 'atlas-labs/atlas-4.5', CONSENT.none).aliases, ['atlas-labs/atlas-4.5', 'atlas-4-5', 'gateway/atlas-4.5', 'atlas-4.5']);
  });

  test('every category is present, with several endpoints per model somewhere', () => {
    const categories = new Set(demo.models.map((entry) => entry.category));
    assert.deepEqual([...categories].sort(), ['EMBEDDING', 'IMAGE', 'LLM', 'VIDEO']);
    assert.ok(demo.models.some((entry) => entry.endpoints.length >= 2));
  });

  test('the embeddings model: input price with its list price, limits and shortening range', () => {
    const row = rowOf(catalog, 'atlas-embed', CONSENT.none);
    assert.equal(row.id, 'gateway/atlas-embed-1');
    assert.equal(row.category, 'EMBEDDING');
    assert.deepEqual(row.supported_endpoints, ['embeddings']);
    assert.deepEqual(row.pricing, { unit: 'per_1m_tokens', input_per_1m: 0.02, list: { input_per_1m: 0.025 }, discount_percent: 20 });
    assert.deepEqual(row.limits, { max_input_tokens: 300000, max_batch_inputs: 2048 });
    assert.deepEqual(row.capabilities, { dimensions: { minimum: 32, maximum: 256 } });
    assert.equal(row.available, true);
  });

  test('flagship: long-context tier, search price, per-provider constraints', () => {
    const row = rowOf(catalog, 'atlas-4.5', CONSENT.none);
    assert.equal(row.id, 'gateway/atlas-4-5');
    assert.deepEqual(row.pricing, {
      unit: 'per_1m_tokens',
      input_per_1m: 3,
      output_per_1m: 15,
      cache_read_per_1m: 0.3,
      cache_write_per_1m: 3.75,
      long_context: {
        threshold_tokens: 200000,
        base_input_per_1m: 6,
        base_output_per_1m: 22.5,
        input_per_1m: 6,
        output_per_1m: 22.5,
        cache_read_per_1m: 0.6,
      },
    });
    assert.equal(row.price_search_per_query, 0.01);
    assert.deepEqual(row.limits, { max_tokens: 32000, context_window: 200000, reasoning_efforts: ['low', 'medium', 'high'] });
    assert.deepEqual(row.parameter_constraints, [
      {
        provider: 'sim-first',
        parameters: {
          chat: {
            temperature: { supported: true, type: 'number', minimum: 0, maximum: 1 },
            reasoning_effort: { supported: true, type: 'string', allowed_values: ['low', 'medium', 'high'] },
          },
        },
      },
    ]);
    // The quick start's model: no route is cheaper than the listed price (see quick-start.test.ts).
    const flagship = demo.models.find((entry) => entry.id === 'gateway/atlas-4-5');
    assert.ok(flagship?.endpoints.every((endpoint) => endpoint.pinned !== true));
  });

  test('mixed supply: first-party rates with a full discount; community rates once allowed', () => {
    const firstParty = rowOf(catalog, 'gateway/atlas-4-5-mini', CONSENT.none);
    assert.equal(firstParty.supply, 'mixed', 'supply describes the model, not the view');
    assert.deepEqual(firstParty.pricing, {
      unit: 'per_1m_tokens',
      input_per_1m: 0.8,
      output_per_1m: 4,
      cache_read_per_1m: 0.08,
      list: { input_per_1m: 1, output_per_1m: 5, cache_read_per_1m: 0.1 },
      discount_percent: 20,
    });
    const community = rowOf(catalog, 'gateway/atlas-4-5-mini', CONSENT.community);
    assert.equal(community.supply, 'mixed');
    assert.deepEqual(community.pricing, {
      unit: 'per_1m_tokens',
      conditions: ['community_supply'],
      input_per_1m: 0.5,
      output_per_1m: 2.5,
      list: { input_per_1m: 1, output_per_1m: 5 },
      discount_percent: 50,
    });
    assert.equal(community.capabilities.structured_outputs, false);
  });

  test('reasoning model: no sampling, low/high effort, partial discount, its own promotion, a pinned endpoint ignored for price', () => {
    const row = rowOf(catalog, 'gateway/lumen-3-reasoning', CONSENT.none);
    assert.equal(row.capabilities.sampling, false);
    assert.equal(row.capabilities.parallel_tool_calls, false);
    assert.deepEqual(row.limits.reasoning_efforts, ['low', 'high']);
    assert.deepEqual(row.pricing.list, { input_per_1m: 2, output_per_1m: 8 });
    assert.equal(row.pricing.discount_percent, undefined);
    assert.equal(row.discount_percent, 10);
    assert.equal(row.pricing.input_per_1m, 1.5, 'the cheaper pinned endpoint does not set the public price');
    assert.equal(catalog.routes('gateway/lumen-3-reasoning', CONSENT.none).length, 2, 'the pinned endpoint stays routable');
  });

  test('free, image and video models', () => {
    assert.equal(rowOf(catalog, 'quill-free', CONSENT.none).pricing.is_free, true);
    const image = rowOf(catalog, 'gateway/prism-image-2', CONSENT.none);
    assert.deepEqual(image.supported_endpoints, ['images/generations', 'images/edits']);
    assert.deepEqual(image.pricing, { unit: 'per_image', per_image: 0.04, list: { per_image: 0.05 }, discount_percent: 20 });
    assert.deepEqual(rowOf(catalog, 'gateway/prism-image-2-turbo', CONSENT.none).supported_endpoints, ['images/generations']);
    const video = rowOf(catalog, 'gateway/reel-3', CONSENT.all);
    assert.deepEqual(video.limits, { max_duration_seconds: 8, supported_durations: [6, 8] });
    assert.deepEqual(video.pricing.variants, [
      { key: '720p', price: 0.0025, meta: { resolution: '1280x720' } },
      { key: '1080p', price: 0.005, meta: { resolution: '1920x1080', supported_durations: [8] } },
      { key: '4k', price: 0.0075, meta: { resolution: '3840x2160', supported_durations: [8] } },
    ]);
    assert.deepEqual(video.pricing.conditions, ['community_supply']);
  });

  test('every row of every view matches the published response schema', () => {
    const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
    const validate = addFormats(new Ajv({ strict: false })).compile(ModelList);
    for (const consent of Object.values(CONSENT)) {
      const list = { object: 'list', data: catalog.listModels(consent, null) };
      assert.ok(validate(list), JSON.stringify(validate.errors));
    }
  });

  test('rows survive a JSON round trip unchanged (plain JSON numbers, no bigint)', () => {
    for (const consent of Object.values(CONSENT)) {
      const rows = catalog.listModels(consent, null);
      assert.deepEqual(JSON.parse(JSON.stringify(rows)), rows);
    }
  });
});
