/**
 * One public Model row (docs/catalog.md, "Field by field") as one consent view sees it. Prices,
 * capabilities, limits, parameter constraints and availability come from the enabled endpoints that
 * view may use; `supply` and `training_use` describe the model, so they come from all its enabled
 * endpoints. Field order is the public one, as in the worked example of docs/catalog.md.
 */
import type { ModelConfig, PricingUnit } from '../config/schema.ts';
import { publicCapabilities } from './capabilities.ts';
import { publicParameterConstraints } from './constraints.ts';
import type { CatalogEndpoint } from './endpoints.ts';
import { publicLimits } from './limits.ts';
import { publicPricing } from './pricing.ts';
import { displayUsd } from './rate-keys.ts';
import type { ModelRow } from './schemas.ts';
import { supportedEndpoints } from './supported-endpoints.ts';
import { modelSupply, modelTrainingUse } from './supply.ts';
import type { Servable } from './types.ts';

/** The registration date of a model whose config gives neither registered_at nor released_at. */
export const DEFAULT_REGISTERED_AT = '2025-01-01';

export interface ModelRowInput {
  readonly model: ModelConfig;
  readonly aliases: readonly string[];
  /** Every enabled endpoint of the model, in config order. */
  readonly endpoints: readonly CatalogEndpoint[];
  /** The enabled endpoints the view may use, in config order. */
  readonly usable: readonly CatalogEndpoint[];
  readonly servable: Servable;
  /** The global promotion (`promotions.discount_percent`), if any. */
  readonly globalDiscountPercent: number | undefined;
}

export function modelRow({ model, aliases, endpoints, usable, servable, globalDiscountPercent }: ModelRowInput): ModelRow {
  const routes = usable.map((endpoint) => endpoint.route);
  const modelRoutes = endpoints.map((endpoint) => endpoint.route);
  const capabilities = publicCapabilities(routes, model.input_modalities);
  // A model cannot be registered before its release: without a configured date, the release
  // date stands in, and only without either does the fixed default apply.
  const registeredAt = model.registered_at ?? model.released_at ?? DEFAULT_REGISTERED_AT;
  return {
    id: model.id,
    aliases: [...aliases],
    object: 'model',
    owned_by: model.owned_by,
    created: epochSeconds(registeredAt),
    released_at: model.released_at ?? null,
    registered_at: registeredAt,
    updated_at: model.updated_at ?? null,
    name: model.name,
    description: model.description ?? null,
    series: model.series ?? null,
    input_modalities: model.input_modalities,
    output_modalities: model.output_modalities,
    knowledge_cutoff: model.knowledge_cutoff ?? null,
    price_search_per_query: capabilities.web_search === true ? searchPrice(usable) : null,
    supply: modelSupply(modelRoutes),
    training_use: modelTrainingUse(modelRoutes),
    category: model.category,
    type: model.type,
    supported_endpoints: supportedEndpoints(model, capabilities),
    parameter_constraints: publicParameterConstraints(routes),
    capabilities,
    limits: publicLimits(routes),
    pricing: publicPricing(pricingUnit(model), usable),
    available: routes.some((route) => servable(route.provider.kind, model.category)),
    discount_percent: promotion(model.discount_percent ?? globalDiscountPercent),
  };
}

/** Endpoints of one model share a billing unit (checked at load), so the first one names it. */
function pricingUnit(model: ModelConfig): PricingUnit {
  return model.endpoints[0].pricing.unit;
}

/**
 * The lowest search price among non-pinned endpoints; null when none states one (never 0). The
 * prices share one billing unit: the config loader refuses a model whose search prices do not.
 */
function searchPrice(endpoints: readonly CatalogEndpoint[]): number | null {
  const prices = endpoints.flatMap((endpoint) =>
    endpoint.pinned || endpoint.route.prices.searchPerUnit === undefined ? [] : [endpoint.route.prices.searchPerUnit],
  );
  if (prices.length === 0) return null;
  return displayUsd(prices.reduce((left, right) => (right < left ? right : left)));
}

/** A model-specific promotion wins over the global one (0 opts a model out); 0 shows as null. */
function promotion(percent: number | null | undefined): number | null {
  return percent ? percent : null;
}

function epochSeconds(date: string): number {
  return Date.parse(`${date}T00:00:00Z`) / 1000;
}
