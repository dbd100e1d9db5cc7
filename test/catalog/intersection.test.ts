/**
 * What several routes of one model guarantee together: capabilities (true/false/omitted), limits
 * (smallest maximum, intersected lists, omitted when unverified) and per-provider parameter
 * constraints.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCatalog } from '../../src/catalog/catalog.ts';
import type { CapabilitiesConfig, EndpointConfig, LimitsConfig } from '../../src/config/schema.ts';
import { config, endpoint, model, rowOf } from './builders.ts';

function rowWith(endpoints: readonly EndpointConfig[], fields = {}) {
  return rowOf(buildCatalog(config([model('gateway/m', endpoints, fields)])), 'gateway/m');
}

describe('capabilities', () => {
  const cases: { name: string; routes: CapabilitiesConfig[]; modalities?: string[]; expected: Record<string, boolean> }[] = [
    { name: 'true on every route → true', routes: [{ tool_use: true }, { tool_use: true }], expected: { tool_use: true } },
    { name: 'false on any route → false', routes: [{ tool_use: true }, { tool_use: false }], expected: { tool_use: false } },
    { name: 'false beside unverified → false', routes: [{ sampling: false }, {}], expected: { sampling: false } },
    { name: 'true beside unverified → omitted', routes: [{ web_search: true }, {}], expected: {} },
    { name: 'strict_tools is for validation only, never public', routes: [{ strict_tools: true }], expected: {} },
    {
      name: 'thinking modes follow the same rules',
      routes: [
        { thinking_manual: true, thinking_adaptive: true, thinking_disable: true },
        { thinking_manual: true, thinking_adaptive: false },
      ],
      expected: { thinking_manual: true, thinking_adaptive: false },
    },
    {
      name: 'vision is true whenever input_modalities has image',
      routes: [{ vision: false }],
      modalities: ['text', 'image'],
      expected: { vision: true },
    },
    { name: 'vision follows the routes for text-only models', routes: [{ vision: false }], expected: { vision: false } },
  ];
  for (const { name, routes, modalities, expected } of cases) {
    test(name, () => {
      const row = rowWith(
        routes.map((capabilities) => endpoint({ capabilities, pricing: { input_per_1m: 1, output_per_1m: 1 } })),
        modalities ? { input_modalities: modalities } : {},
      );
      assert.deepEqual(row.capabilities, expected);
    });
  }

  test('pinned endpoints are routable, so their capabilities count', () => {
    const row = rowWith([endpoint({ capabilities: { tool_use: true } }), endpoint({ pinned: true, capabilities: { tool_use: false } })]);
    assert.deepEqual(row.capabilities, { tool_use: false });
  });
});

describe('limits', () => {
  const cases: { name: string; routes: LimitsConfig[]; expected: LimitsConfig }[] = [
    {
      name: 'maxima: the smallest across routes',
      routes: [
        { max_tokens: 64000, context_window: 1000000, max_images: 10 },
        { max_tokens: 32000, context_window: 200000, max_images: 4 },
      ],
      expected: { max_tokens: 32000, context_window: 200000, max_images: 4 },
    },
    {
      name: 'a field unverified on any route is omitted',
      routes: [{ max_tokens: 64000, max_duration_seconds: 8 }, { max_duration_seconds: 10 }],
      expected: { max_duration_seconds: 8 },
    },
    {
      name: 'null (no fixed maximum) does not lower the result; all null stays null',
      routes: [
        { max_tokens: null, context_window: null },
        { max_tokens: 4096, context_window: null },
      ],
      expected: { max_tokens: 4096, context_window: null },
    },
    {
      name: "lists: the intersection, in the first route's order",
      routes: [
        { supported_sizes: ['auto', '1024x1024', '1536x1024'], reasoning_efforts: ['none', 'low', 'medium', 'high'], supported_durations: [4, 6, 8] },
        { supported_sizes: ['1536x1024', '1024x1024'], reasoning_efforts: ['low', 'high'], supported_durations: [8, 6] },
      ],
      expected: { supported_sizes: ['1024x1024', '1536x1024'], reasoning_efforts: ['low', 'high'], supported_durations: [6, 8] },
    },
    {
      name: 'an empty intersection is an empty list: no value is supported everywhere',
      routes: [{ supported_qualities: ['low'], supported_formats: ['png'] }, { supported_qualities: ['high'] }],
      expected: { supported_qualities: [] },
    },
  ];
  for (const { name, routes, expected } of cases) {
    test(name, () => {
      assert.deepEqual(rowWith(routes.map((limits) => endpoint({ limits }))).limits, expected);
    });
  }
});

describe('parameter constraints', () => {
  test('one entry per provider; several endpoints of one provider are intersected', () => {
    const row = rowWith([
      endpoint({
        provider: 'p1',
        model: 'secret-upstream-a',
        parameters: {
          chat: {
            temperature: { supported: true, type: 'number', minimum: 0, maximum: 2 },
            reasoning_effort: { supported: true, type: 'string', allowed_values: ['none', 'low', 'medium', 'high'] },
            top_k: { supported: true },
            seed: { supported: false },
          },
        },
      }),
      endpoint({
        provider: 'p2',
        model: 'secret-upstream-b',
        parameters: { chat: { temperature: { supported: true, minimum: 0, maximum: 1.5 } } },
      }),
      endpoint({
        provider: 'p1',
        model: 'secret-upstream-c',
        parameters: {
          chat: {
            temperature: { supported: true, type: 'number', minimum: 0.5, maximum: 1 },
            reasoning_effort: { supported: true, type: 'string', allowed_values: ['high', 'low', 'xhigh'] },
            seed: { supported: true, type: 'integer' },
          },
        },
      }),
    ]);
    assert.deepEqual(row.parameter_constraints, [
      {
        provider: 'p1',
        parameters: {
          chat: {
            temperature: { supported: true, type: 'number', minimum: 0.5, maximum: 1 },
            reasoning_effort: { supported: true, type: 'string', allowed_values: ['low', 'high'] },
            // False on one endpoint is false for the provider; the type only one endpoint states is kept.
            seed: { supported: false, type: 'integer' },
          },
        },
      },
      { provider: 'p2', parameters: { chat: { temperature: { supported: true, minimum: 0, maximum: 1.5 } } } },
    ]);
    // top_k is true on one endpoint and unverified on the other, so nothing is known for p1.
    const text = JSON.stringify(row);
    assert.ok(!text.includes('secret-upstream'), 'no upstream names or endpoint ids leak');
    assert.ok(!text.includes('top_k'));
  });

  test('generation and editing constraints stay separate', () => {
    const row = rowWith(
      [
        endpoint({
          pricing: { unit: 'per_image', per_image: 0.04 },
          parameters: {
            'image-generation': { size: { allowed_values: ['1024x1024', '1536x1024'] } },
            'image-edit': { size: { supported: false } },
          },
        }),
      ],
      { category: 'IMAGE', type: 'image', output_modalities: ['image'] },
    );
    assert.deepEqual(row.parameter_constraints, [
      {
        provider: 'p1',
        parameters: {
          'image-generation': { size: { allowed_values: ['1024x1024', '1536x1024'] } },
          'image-edit': { size: { supported: false } },
        },
      },
    ]);
  });

  test('disjoint allowed values intersect to an empty list', () => {
    const row = rowWith([
      endpoint({ parameters: { video: { duration: { allowed_values: [4, 6] } } } }),
      endpoint({ parameters: { video: { duration: { allowed_values: [8] } } } }),
    ]);
    assert.deepEqual(row.parameter_constraints, [{ provider: 'p1', parameters: { video: { duration: { allowed_values: [] } } } }]);
  });
});
