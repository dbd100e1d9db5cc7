/**
 * Small builders for catalog test configs: a model or endpoint states only what a test is about,
 * everything else gets a neutral default. Configs still pass the loader's validation (buildCatalog
 * validates them), so tests cannot rely on shapes an operator could not write.
 */
import { buildCatalog } from '../../src/catalog/catalog.ts';
import type { ModelRow } from '../../src/catalog/schemas.ts';
import type { Catalog } from '../../src/catalog/types.ts';
import type { EndpointConfig, EndpointPricingConfig, GatewayConfig, ModelConfig } from '../../src/config/schema.ts';
import type { Consent } from '../../src/storage/store.ts';

export const CONSENT = {
  none: { communitySupply: false, trainingUse: false },
  community: { communitySupply: true, trainingUse: false },
  training: { communitySupply: false, trainingUse: true },
  all: { communitySupply: true, trainingUse: true },
} as const satisfies Record<string, Consent>;

export const PROVIDERS = ['p1', 'p2', 'p3'] as const;

export type EndpointInput = Partial<Omit<EndpointConfig, 'pricing'>> & { pricing?: Partial<EndpointPricingConfig> };

let upstreamCounter = 0;

export function endpoint(input: EndpointInput = {}): EndpointConfig {
  upstreamCounter += 1;
  const { pricing, ...rest } = input;
  return {
    provider: 'p1',
    model: `upstream-${upstreamCounter}`,
    supply: 'first_party',
    training_use: 'never',
    ...rest,
    pricing: { unit: 'per_1m_tokens', ...pricing },
  };
}

export function model(id: string, endpoints: readonly EndpointConfig[], fields: Partial<ModelConfig> = {}): ModelConfig {
  return {
    id,
    name: id.slice(id.lastIndexOf('/') + 1),
    owned_by: 'tests',
    category: 'LLM',
    type: 'chat',
    input_modalities: ['text'],
    output_modalities: ['text'],
    endpoints: [...endpoints],
    ...fields,
  };
}

export function config(models: readonly ModelConfig[], fields: Partial<GatewayConfig> = {}): GatewayConfig {
  return {
    providers: PROVIDERS.map((id) => ({ id, kind: 'simulated' as const })),
    models: [...models],
    ...fields,
  };
}

/** The public row of one model in one consent view (all consent unless told). */
export function rowOf(catalog: Catalog, id: string, consent: Consent = CONSENT.all): ModelRow {
  const row = catalog.getModel(id, consent, null);
  if (!row) throw new Error(`${id} is not visible`);
  return row as ModelRow;
}

/** The pricing of a one-model catalog built from these endpoints. */
export function pricingOf(endpoints: readonly EndpointConfig[], consent: Consent = CONSENT.all, fields: Partial<ModelConfig> = {}) {
  const catalog = buildCatalog(config([model('gateway/m', endpoints, fields)]));
  return rowOf(catalog, 'gateway/m', consent).pricing;
}
