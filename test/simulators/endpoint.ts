/**
 * A RouteEndpoint for calling a protocol directly against a simulator, outside the gateway (the
 * catalog builds real ones from config). Only what protocols read is meaningful here.
 */
import type { ProviderConfig } from '../../src/config/schema.ts';
import { routeTimeouts } from '../../src/catalog/timeouts.ts';
import type { RouteEndpoint } from '../../src/catalog/types.ts';
import type { CallContext } from '../../src/protocols/protocol.ts';

export function simulatorEndpoint(provider: Omit<ProviderConfig, 'id'> & { id?: string }, upstreamModel = 'sim-model'): RouteEndpoint {
  const config: ProviderConfig = { id: provider.id ?? 'sim', ...provider };
  return {
    key: `${config.id}:${upstreamModel}`,
    modelId: upstreamModel,
    provider: config,
    upstreamModel,
    supply: 'first_party',
    trainingUse: 'never',
    capabilities: {},
    limits: {},
    parameters: {} as RouteEndpoint['parameters'],
    prices: { unit: 'per_1m_tokens', standard: {}, variants: new Map(), searchBilling: 'per_query' },
    video: { explicitDuration: true, variantMeta: new Map() },
    timeouts: routeTimeouts(config, {
      provider: config.id,
      model: upstreamModel,
      supply: 'first_party',
      training_use: 'never',
      pricing: { unit: 'per_1m_tokens' },
    }),
  };
}

export function callContext(overrides: Partial<CallContext> = {}): CallContext {
  return { apiKey: 'sk-test', signal: new AbortController().signal, requestId: 'req_test', ...overrides };
}
