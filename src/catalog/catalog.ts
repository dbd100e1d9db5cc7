/**
 * Builds the Catalog from a config: once per config load, every public row is derived for each of
 * the four consent classes, so serving a request is a lookup and, for keys with an allowed-model
 * list, a filter — never a derivation.
 */
import { validateConfig } from '../config/load.ts';
import type { GatewayConfig, ModelConfig } from '../config/schema.ts';
import type { Consent } from '../storage/store.ts';
import { nameIndex, publicAliases } from '../config/aliases.ts';
import { CONSENT_CLASSES } from './consent.ts';
import { enabledEndpoints, type CatalogEndpoint } from './endpoints.ts';
import { modelRow } from './model-row.ts';
import type { ModelRow } from './schemas.ts';
import { consentClassKey, endpointAllowed, type Catalog, type RouteEndpoint, type Servable } from './types.ts';

export interface CatalogOptions {
  /**
   * Which routes the gateway can call (see Servable); a model is `available` only through one.
   * Without it every route counts as callable, which suits callers that only resolve names and
   * routes (the admin CLI, unit tests); a serving gateway always passes it.
   */
  readonly servable?: Servable;
}

interface ModelEntry {
  readonly model: ModelConfig;
  readonly aliases: readonly string[];
  readonly endpoints: readonly CatalogEndpoint[];
}

/** Everything one consent class sees. */
interface View {
  /** Visible rows in config order. */
  readonly rows: readonly ModelRow[];
  readonly rowsById: ReadonlyMap<string, ModelRow>;
  readonly routesById: ReadonlyMap<string, readonly RouteEndpoint[]>;
}

/**
 * Derives the catalog. The config is validated first (the loader's checks, alias conflicts
 * included), so a config assembled in code obeys the same rules as a file; a bad one throws
 * ConfigError with the path of the offending field.
 */
export function buildCatalog(config: GatewayConfig, options: CatalogOptions = {}): Catalog {
  validateConfig(config);
  const servable = options.servable ?? everyRoute;
  const providers = new Map(config.providers.map((provider) => [provider.id, provider]));
  const entries: ModelEntry[] = config.models.map((model) => ({
    model,
    aliases: publicAliases(model),
    endpoints: enabledEndpoints(model, providers),
  }));
  const names = nameIndex(config.models);
  const categories = new Map(config.models.map((model) => [model.id, model.category]));
  const routesByKey = new Map(entries.map(({ model, endpoints }) => [model.id, new Map(endpoints.map((endpoint) => [endpoint.route.key, endpoint.route]))]));
  const globalDiscountPercent = config.promotions?.discount_percent;
  const views = new Map(CONSENT_CLASSES.map((consent) => [consentClassKey(consent), buildView(entries, consent, servable, globalDiscountPercent)]));
  // CONSENT_CLASSES covers every combination, so every owner's class has a view.
  const viewFor = (consent: Consent): View => views.get(consentClassKey(consent)) as View;

  return {
    resolve: (name) => names.get(name),
    listModels(consent, allowedModels) {
      const rows = viewFor(consent).rows;
      return allowedModels === null ? rows : rows.filter((row) => allowedModels.has(row.id));
    },
    getModel(name, consent, allowedModels) {
      const id = names.get(name);
      if (id === undefined || (allowedModels !== null && !allowedModels.has(id))) return undefined;
      return viewFor(consent).rowsById.get(id);
    },
    routes: (modelId, consent) => viewFor(consent).routesById.get(modelId) ?? [],
    route: (modelId, key) => routesByKey.get(modelId)?.get(key),
    category: (modelId) => categories.get(modelId),
  };
}

const everyRoute: Servable = () => true;

function buildView(entries: readonly ModelEntry[], consent: Consent, servable: Servable, globalDiscountPercent: number | undefined): View {
  const rows: ModelRow[] = [];
  const routesById = new Map<string, readonly RouteEndpoint[]>();
  for (const { model, aliases, endpoints } of entries) {
    const usable = endpoints.filter((endpoint) => endpointAllowed(endpoint.route, consent));
    // A model whose every active endpoint needs consent this owner has not given is hidden
    // (community-only, training-only). A model with no active endpoint at all stays listed as
    // unavailable, so operators can announce it.
    if (endpoints.length > 0 && usable.length === 0) continue;
    rows.push(Object.freeze(modelRow({ model, aliases, endpoints, usable, servable, globalDiscountPercent })));
    routesById.set(model.id, Object.freeze(usable.map((endpoint) => endpoint.route)));
  }
  Object.freeze(rows);
  return { rows, rowsById: new Map(rows.map((row) => [row.id, row])), routesById };
}
