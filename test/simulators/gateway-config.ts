/**
 * A gateway config for end-to-end protocol tests: chat models, each served by some of the given
 * upstream providers (simulators) in fallback order. Earlier endpoints are cheaper, so the order is
 * the same whether routing keeps config order or sorts by price.
 */
import type { GatewayConfig, ProviderConfig } from '../../src/config/schema.ts';
import { model, TEXT_CAPABILITIES } from '../chat/helpers.ts';

export interface E2EProvider {
  readonly id: string;
  readonly kind: ProviderConfig['kind'];
  readonly baseUrl: string;
  /** Environment variable with the provider key; the test passes its value in `env`. */
  readonly apiKeyEnv?: string;
  readonly timeoutMs?: number;
  /** The upstream model name (default: `<id>-model`). */
  readonly upstreamModel?: string;
}

/** Model id → the providers serving it, first choice first. */
export type E2EModels = Readonly<Record<string, readonly E2EProvider[]>>;

/** `extra_body` options every end-to-end route allows (integers ≥ 1), as the upstream names them. */
export const EXTRA_OPTION_SNAKE = 'extra_body.cloud_a.top_k';
export const EXTRA_OPTION_CAMEL = 'extra_body.cloud_a.topK';

export function chatModelsConfig(models: E2EModels): GatewayConfig {
  const providers = [
    ...new Map(
      Object.values(models)
        .flat()
        .map((provider) => [provider.id, provider]),
    ).values(),
  ];
  return {
    providers: providers.map((provider) => ({
      id: provider.id,
      kind: provider.kind,
      base_url: provider.baseUrl,
      ...(provider.apiKeyEnv !== undefined && { api_key_env: provider.apiKeyEnv }),
      ...(provider.timeoutMs !== undefined && { timeout_ms: provider.timeoutMs }),
    })),
    models: Object.entries(models).map(([id, served]) =>
      model(
        id,
        served.map((provider, position) => ({
          provider: provider.id,
          model: provider.upstreamModel ?? `${provider.id}-model`,
          supply: 'first_party',
          training_use: 'never',
          pricing: {
            unit: 'per_1m_tokens',
            input_per_1m: 1 + position,
            output_per_1m: 2 + position,
            cache_read_per_1m: 0.1,
            cache_write_per_1m: 1.25,
            cache_write_1h_per_1m: 2,
          },
          capabilities: TEXT_CAPABILITIES,
          limits: { max_tokens: 4096, context_window: 128000, reasoning_efforts: ['none', 'low', 'medium', 'high'] },
          // One provider option per naming style, for the extra_body tests: Chat's and Gemini's.
          parameters: { chat: { [EXTRA_OPTION_SNAKE]: { type: 'integer', minimum: 1 }, [EXTRA_OPTION_CAMEL]: { type: 'integer', minimum: 1 } } },
        })),
      ),
    ),
  };
}

/** The two web-search models of the protocol tests: one billing each query, one each search request. */
export const SEARCH_PER_QUERY = 'gateway/search-per-query';
export const SEARCH_PER_REQUEST = 'gateway/search-per-request';

/**
 * Chat models with web search on every route at `priceUsd` per search unit, billed per query or
 * per request as `models` says (both search models by default).
 */
export function webSearchConfig(
  provider: E2EProvider,
  priceUsd: string,
  models: Readonly<Record<string, 'per_query' | 'per_request'>> = { [SEARCH_PER_QUERY]: 'per_query', [SEARCH_PER_REQUEST]: 'per_request' },
): GatewayConfig {
  const config = chatModelsConfig(Object.fromEntries(Object.keys(models).map((id) => [id, [provider]])));
  for (const entry of config.models) {
    for (const route of entry.endpoints) {
      route.capabilities = { ...route.capabilities, web_search: true, web_search_with_tools: true };
      route.search_price_per_query = Number(priceUsd);
      route.search_billing = models[entry.id];
    }
  }
  return config;
}
