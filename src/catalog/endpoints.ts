/**
 * Turns a model's configured endpoints into what the catalog works with: the RouteEndpoint that
 * routing, policy, billing and protocols consume, plus the catalog-only facts (pinned, display
 * prices). Disabled endpoints are dropped here: they take no traffic and count for nothing public.
 */
import { routeTimeouts } from './timeouts.ts';
import type { ModelConfig, ProviderConfig } from '../config/schema.ts';
import { displayPrices, endpointPrices, type DisplayPrices } from './prices.ts';
import type { RouteEndpoint } from './types.ts';

export interface CatalogEndpoint {
  readonly route: RouteEndpoint;
  /** A pinned reference is routable and billable but never sets the public lowest price. */
  readonly pinned: boolean;
  readonly display: DisplayPrices;
}

export function enabledEndpoints(model: ModelConfig, providers: ReadonlyMap<string, ProviderConfig>): readonly CatalogEndpoint[] {
  const endpoints: CatalogEndpoint[] = [];
  model.endpoints.forEach((endpoint, index) => {
    if (endpoint.enabled === false) return;
    const provider = providers.get(endpoint.provider);
    // buildCatalog validates the config first, so every provider exists; this only narrows the type.
    if (!provider) throw new Error(`model ${model.id} endpoint ${index}: unknown provider '${endpoint.provider}'`);
    endpoints.push({
      route: {
        key: `${provider.id}:${endpoint.model}`,
        modelId: model.id,
        provider,
        upstreamModel: endpoint.model,
        supply: endpoint.supply,
        trainingUse: endpoint.training_use,
        capabilities: endpoint.capabilities ?? {},
        limits: endpoint.limits ?? {},
        parameters: endpoint.parameters ?? {},
        prices: endpointPrices(endpoint),
        video: {
          defaultDurationSeconds: endpoint.video?.default_duration_seconds,
          explicitDuration: endpoint.video?.explicit_duration !== false,
          variantMeta: new Map((endpoint.pricing.variants ?? []).map((variant) => [variant.key, variant.meta ?? {}])),
        },
        latencyMs: endpoint.latency_ms,
        throughputTps: endpoint.throughput_tps,
        timeouts: routeTimeouts(provider, endpoint),
      },
      pinned: endpoint.pinned === true,
      display: displayPrices(endpoint.pricing),
    });
  });
  return endpoints;
}
