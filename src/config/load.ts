/**
 * Loads and validates the config file. A bad file is a ConfigError naming the JSON path of the bad
 * field (`/models/2/endpoints/0/pricing/unit`); main prints it and exits non-zero.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { load as parseYaml, YAMLException } from 'js-yaml';
import { findAliasConflict } from './aliases.ts';
import { perMillionRateToPicosPerToken, usdToPicos } from '../core/money.ts';
import { GatewayConfig, searchBillingOf, type EndpointConfig } from './schema.ts';

export const DEMO_CONFIG_PATH = fileURLToPath(new URL('./demo-catalog.yaml', import.meta.url));

export class ConfigError extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(`${path || '/'}: ${message}`);
    this.name = 'ConfigError';
    this.path = path;
  }
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
/**
 * Compiled at every start, so compiled for a start's sake: the config is checked once per process,
 * and Ajv's optimizing pass over the generated code and its check of the schema against the JSON
 * Schema meta-schema took over half of the compile (about 100 of a start's 650 ms of CPU). The
 * schema is checked against the meta-schema by a test instead (test/catalog/config-schema.test.ts).
 */
const ajv = addFormats(new Ajv({ allErrors: false, strict: false, coerceTypes: false, validateSchema: false, code: { optimize: false } }));
const validateShape = ajv.compile<GatewayConfig>(GatewayConfig);

export function loadConfigFile(path: string): GatewayConfig {
  return validateConfig(readConfigDocument(path));
}

/** The config a server runs on, and whether its catalog is the built-in demo one. */
export interface ServedConfig {
  readonly config: GatewayConfig;
  /**
   * True when GATEWAY_CONFIG is unset or its file has only operational sections (no `providers`,
   * `models` or `promotions`): the demo catalog is served, and a first start creates the demo account.
   */
  readonly demoCatalog: boolean;
}

/** The section names that make a config file a catalog of its own. */
const CATALOG_SECTIONS = ['providers', 'models', 'promotions'];

/**
 * GATEWAY_CONFIG's file (`path`), or the demo catalog when it is unset. A file of operational
 * sections only (`webhooks`, `jobs`, `rate_limits`, …) tunes the demo catalog instead of replacing
 * it, so that a newcomer can change one setting without writing a catalog.
 */
export function loadServedConfig(path: string | undefined): ServedConfig {
  const demo = () => readConfigDocument(DEMO_CONFIG_PATH) as Record<string, unknown>;
  if (path === undefined) return { config: validateConfig(demo()), demoCatalog: true };
  const document = readConfigDocument(path);
  const operational = document === null || (typeof document === 'object' && !Array.isArray(document) && !CATALOG_SECTIONS.some((name) => name in document));
  if (!operational) return { config: validateConfig(document), demoCatalog: false };
  return { config: validateConfig({ ...demo(), ...(document as Record<string, unknown> | null) }), demoCatalog: true };
}

function readConfigDocument(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError('', `cannot read config file ${path}: ${(error as Error).message}`);
  }
  return parseDocument(text);
}

export function parseConfig(text: string): GatewayConfig {
  return validateConfig(parseDocument(text));
}

function parseDocument(text: string): unknown {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    if (!(error instanceof YAMLException)) throw error;
    const position = error.mark ? ` (line ${error.mark.line + 1})` : '';
    throw new ConfigError('', `invalid YAML${position}: ${error.reason}`);
  }
  return document;
}

export function validateConfig(document: unknown): GatewayConfig {
  if (!validateShape(document)) throw shapeError(validateShape.errors ?? []);
  checkReferences(document);
  return document;
}

function shapeError(errors: readonly ErrorObject[]): ConfigError {
  const error = errors[0];
  if (!error) return new ConfigError('', 'invalid config');
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return new ConfigError(`${error.instancePath}/${extra}`, 'unknown field');
  }
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return new ConfigError(`${error.instancePath}/${missing}`, 'required field is missing');
  }
  if (error.keyword === 'const') {
    // A union of literals (`kind`, `unit`, …) fails once per literal, each saying only "must be
    // equal to constant"; together they are the allowed values.
    const allowed = errors
      .filter((other) => other.keyword === 'const' && other.instancePath === error.instancePath)
      .map((other) => JSON.stringify((other.params as { allowedValue: unknown }).allowedValue));
    return new ConfigError(error.instancePath, `must be one of ${allowed.join(', ')}`);
  }
  return new ConfigError(error.instancePath, error.message ?? 'invalid value');
}

/** Cross-field rules a schema cannot say: references resolve, ids are unique, amounts are exact. */
function checkReferences(config: GatewayConfig): void {
  const providers = new Set<string>();
  config.providers.forEach((provider, index) => {
    if (providers.has(provider.id)) throw new ConfigError(`/providers/${index}/id`, `duplicate provider id '${provider.id}'`);
    providers.add(provider.id);
    if (provider.kind !== 'simulated' && !provider.base_url) {
      throw new ConfigError(`/providers/${index}/base_url`, `required for providers of kind '${provider.kind}'`);
    }
  });
  const models = new Set<string>();
  config.models.forEach((model, modelIndex) => {
    const base = `/models/${modelIndex}`;
    if (models.has(model.id)) throw new ConfigError(`${base}/id`, `duplicate model id '${model.id}'`);
    models.add(model.id);
    const routeKeys = new Set<string>();
    // Search prices are per search unit; units counted differently cannot be compared or shown as one.
    let searchUnit: string | undefined;
    model.endpoints.forEach((endpoint, endpointIndex) => {
      const at = `${base}/endpoints/${endpointIndex}`;
      if (!providers.has(endpoint.provider)) {
        throw new ConfigError(`${at}/provider`, `unknown provider '${endpoint.provider}'`);
      }
      // The catalog names a route `<provider>:<upstream model>`; one model cannot list it twice.
      const routeKey = `${endpoint.provider}:${endpoint.model}`;
      if (routeKeys.has(routeKey)) throw new ConfigError(`${at}/model`, `duplicate endpoint '${routeKey}' for this model`);
      routeKeys.add(routeKey);
      // One public `pricing.unit` per model: its endpoints' prices must be comparable.
      const unit = model.endpoints[0].pricing.unit;
      if (endpoint.pricing.unit !== unit) {
        throw new ConfigError(`${at}/pricing/unit`, `all endpoints of a model use one pricing unit ('${unit}')`);
      }
      checkVariantKeys(endpoint.pricing.variants ?? [], `${at}/pricing/variants`);
      if (model.category === 'VIDEO') checkVideoRoute(endpoint, at);
      if (model.category === 'EMBEDDING') checkEmbeddingRoute(endpoint, at);
      checkAmounts(endpoint.pricing as Record<string, unknown>, `${at}/pricing`);
      if (endpoint.search_price_per_query !== undefined) {
        exactUsd(endpoint.search_price_per_query, `${at}/search_price_per_query`);
        const billing = searchBillingOf(endpoint);
        searchUnit ??= billing;
        if (billing !== searchUnit) {
          throw new ConfigError(`${at}/search_billing`, `all search-priced endpoints of a model bill search in one unit ('${searchUnit}')`);
        }
      }
    });
  });
  const aliasConflict = findAliasConflict(config.models);
  if (aliasConflict) throw new ConfigError(aliasConflict.path, aliasConflict.message);
  const webhooks = config.webhooks;
  if (webhooks?.retry_base_ms !== undefined && webhooks.retry_max_ms !== undefined && webhooks.retry_max_ms < webhooks.retry_base_ms) {
    throw new ConfigError('/webhooks/retry_max_ms', `must be at least retry_base_ms (${webhooks.retry_base_ms})`);
  }
}

/** A video route is priced per second (or per variant, per second) and its duration rules agree with each other. */
function checkVideoRoute(endpoint: EndpointConfig, at: string): void {
  if (endpoint.pricing.unit !== 'per_second') throw new ConfigError(`${at}/pricing/unit`, "a video model is priced 'per_second'");
  if (endpoint.pricing.per_second === undefined && (endpoint.pricing.variants ?? []).length === 0) {
    throw new ConfigError(`${at}/pricing`, 'a video route needs per_second or at least one variant');
  }
  const defaultSeconds = endpoint.video?.default_duration_seconds;
  const supported = endpoint.limits?.supported_durations;
  if (defaultSeconds !== undefined && supported && !supported.includes(defaultSeconds)) {
    throw new ConfigError(`${at}/video/default_duration_seconds`, `must be one of limits.supported_durations (${supported.join(', ')})`);
  }
  (endpoint.pricing.variants ?? []).forEach((variant, index) => {
    const durations = variant.meta?.supported_durations;
    if (durations === undefined) return;
    if (!Array.isArray(durations) || !durations.every((seconds) => Number.isInteger(seconds) && seconds >= 1 && seconds <= 120)) {
      throw new ConfigError(`${at}/pricing/variants/${index}/meta/supported_durations`, 'must be a list of whole seconds, 1 to 120');
    }
  });
}

/** An embedding route is priced per input token, and its shortening range is a range. */
function checkEmbeddingRoute(endpoint: EndpointConfig, at: string): void {
  if (endpoint.pricing.unit !== 'per_1m_tokens') throw new ConfigError(`${at}/pricing/unit`, "an embedding model is priced 'per_1m_tokens'");
  if (endpoint.pricing.input_per_1m === undefined) throw new ConfigError(`${at}/pricing/input_per_1m`, 'an embedding route needs input_per_1m');
  const dimensions = endpoint.capabilities?.dimensions;
  if (dimensions && dimensions.minimum > dimensions.maximum) {
    throw new ConfigError(`${at}/capabilities/dimensions/minimum`, `must be at most maximum (${dimensions.maximum})`);
  }
}

function checkVariantKeys(variants: readonly { key: string }[], path: string): void {
  const keys = new Set<string>();
  variants.forEach((variant, index) => {
    if (keys.has(variant.key)) throw new ConfigError(`${path}/${index}/key`, `duplicate variant key '${variant.key}'`);
    keys.add(variant.key);
  });
}

const TOKEN_RATE_KEYS = new Set(['input_per_1m', 'output_per_1m', 'cache_read_per_1m', 'cache_write_per_1m', 'cache_write_1h_per_1m']);

function checkAmounts(object: Record<string, unknown>, path: string): void {
  for (const [key, value] of Object.entries(object)) {
    if (typeof value === 'number') {
      if (TOKEN_RATE_KEYS.has(key)) exactTokenRate(value, `${path}/${key}`);
      else if (key !== 'threshold_tokens') exactUsd(value, `${path}/${key}`);
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => {
        if (item && typeof item === 'object') checkAmounts(pickAmounts(item as Record<string, unknown>), `${path}/${key}/${index}`);
      });
    } else if (value && typeof value === 'object') {
      checkAmounts(value as Record<string, unknown>, `${path}/${key}`);
    }
  }
}

/** Variant `meta` is free-form; only its price fields are amounts. */
function pickAmounts(variant: Record<string, unknown>): Record<string, unknown> {
  const { meta: _meta, key: _key, ...amounts } = variant;
  return amounts;
}

function exactTokenRate(value: number, path: string): void {
  try {
    perMillionRateToPicosPerToken(value);
  } catch {
    throw new ConfigError(path, 'a per-million-token rate may have at most 6 decimal places');
  }
}

function exactUsd(value: number, path: string): void {
  try {
    usdToPicos(value);
  } catch {
    throw new ConfigError(path, 'a USD amount may have at most 12 decimal places');
  }
}
