/**
 * One search billing unit per model. `price_search_per_query` is a price per search billing unit,
 * and a route counts units either per executed query or once per search-enabled request
 * (`search_billing`). Prices in different units cannot be compared, nor shown as one number, so
 * every endpoint of a model that states a search price (disabled and pinned ones included, as for
 * `pricing.unit`) must count search the same way.
 */
import type { ModelConfig } from '../config/schema.ts';
import type { ConfigConflict } from './aliases.ts';
import { searchBillingOf } from './prices.ts';

/** The first endpoint whose search billing unit differs from its model's first priced one. */
export function findSearchBillingConflict(models: readonly Pick<ModelConfig, 'endpoints'>[]): ConfigConflict | undefined {
  for (const [modelIndex, model] of models.entries()) {
    let unit: string | undefined;
    for (const [endpointIndex, endpoint] of model.endpoints.entries()) {
      if (endpoint.search_price_per_query === undefined) continue;
      const billing = searchBillingOf(endpoint);
      unit ??= billing;
      if (billing !== unit) {
        return {
          path: `/models/${modelIndex}/endpoints/${endpointIndex}/search_billing`,
          message: `all search-priced endpoints of a model bill search in one unit ('${unit}')`,
        };
      }
    }
  }
  return undefined;
}
