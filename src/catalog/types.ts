/**
 * What the catalog hands the rest of the pipeline: resolved routes with prices in pico-USD, and the
 * public Model rows. Derivation lives in this folder only (see docs/catalog.md).
 */
import type { Picos } from '../core/money.ts';
import type { UpstreamTimeouts } from './timeouts.ts';
import type { CapabilitiesConfig, LimitsConfig, EndpointParametersConfig, ModelConfig, ProviderConfig, ProviderKind, PricingUnit } from '../config/schema.ts';
import type { Consent } from '../storage/store.ts';

/** Per-token rates of one tier, pico-USD per token; undefined = the route has no such rate. */
export interface TokenRates {
  readonly input?: Picos;
  readonly output?: Picos;
  readonly cacheRead?: Picos;
  /** Cache writes with a 5-minute lifetime (and every write the provider does not split). */
  readonly cacheWrite?: Picos;
  /** Cache writes with a 1-hour lifetime; undefined = billed at cacheWrite. */
  readonly cacheWrite1h?: Picos;
}

/** An endpoint's billing prices, exact, as configured (reference prices before the account rate). */
export interface EndpointPrices {
  readonly unit: PricingUnit;
  readonly standard: TokenRates;
  /** Input above `thresholdTokens` (exclusive) is billed entirely at these rates. */
  readonly longContext?: TokenRates & { readonly thresholdTokens: number };
  readonly perImage?: Picos;
  readonly perSecond?: Picos;
  readonly perRequest?: Picos;
  /** Video variant key → price per second. */
  readonly variants: ReadonlyMap<string, Picos>;
  /** Per search billing unit; undefined when the route has no web search. */
  readonly searchPerUnit?: Picos;
  readonly searchBilling: 'per_query' | 'per_request';
}

/** A video route's duration rules (config `video` and the variants' `meta`; src/policy/videos.ts). */
export interface VideoRules {
  readonly defaultDurationSeconds?: number;
  /** false: an explicit duration is refused (the model chooses it). */
  readonly explicitDuration: boolean;
  /** Each pricing variant's `meta`, by key (forwarded upstream where the wire has the field). */
  readonly variantMeta: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
}

/** A callable upstream route for one model: everything routing, policy, billing and a protocol need. */
export interface RouteEndpoint {
  /** Stable within a config load: `<provider>:<upstream model>` (never shown to clients). */
  readonly key: string;
  readonly modelId: string;
  readonly provider: ProviderConfig;
  readonly upstreamModel: string;
  readonly supply: 'first_party' | 'community';
  readonly trainingUse: 'never' | 'opt_in';
  readonly capabilities: CapabilitiesConfig;
  readonly limits: LimitsConfig;
  readonly parameters: EndpointParametersConfig;
  readonly prices: EndpointPrices;
  /** How a video route treats durations; empty on other routes. */
  readonly video: VideoRules;
  readonly latencyMs?: number;
  readonly throughputTps?: number;
  /** The upstream timeouts of its attempts (timeouts.ts). */
  readonly timeouts: UpstreamTimeouts;
}

/**
 * The consent a key's owner has given; decides which endpoints it may use. There are four
 * classes, and the catalog precomputes its rows for each.
 */
export type ConsentClass = Consent;

export function consentClassKey(consent: Consent): string {
  return `${consent.communitySupply ? 'cs' : 'nocs'}.${consent.trainingUse ? 'tu' : 'notu'}`;
}

/** Whether an owner with this consent may be served by the endpoint (docs/catalog.md). */
export function endpointAllowed(endpoint: RouteEndpoint, consent: Consent): boolean {
  if (endpoint.supply === 'community' && !consent.communitySupply) return false;
  if (endpoint.trainingUse === 'opt_in' && !consent.trainingUse) return false;
  return true;
}

/**
 * Whether the gateway has a protocol that calls models of this category on providers of this kind.
 * A model is `available` only through a route it can call; the predicate is supplied where the
 * gateway is composed, so the catalog does not depend on the protocols or the pipeline.
 */
export type Servable = (providerKind: ProviderKind, category: ModelConfig['category']) => boolean;

/** The public Model row exactly as `GET /v1/models` serves it (JSON-ready). */
export type PublicModel = Record<string, unknown> & { readonly id: string; readonly object: 'model' };

export interface Catalog {
  /** Canonical model id for an id or alias; undefined when unknown. */
  resolve(name: string): string | undefined;
  /** Public rows visible to an owner with this consent, filtered by the key's allowed models. */
  listModels(consent: Consent, allowedModels: ReadonlySet<string> | null): readonly PublicModel[];
  /** One public row, or undefined when unknown, hidden by consent, or outside the allowed list. */
  getModel(name: string, consent: Consent, allowedModels: ReadonlySet<string> | null): PublicModel | undefined;
  /** Enabled endpoints of a model that an owner with this consent may use, in config order. */
  routes(modelId: string, consent: Consent): readonly RouteEndpoint[];
  /**
   * One enabled route of a model by its key, whatever the consent (checked when the call was
   * prepared): how a job finds the routes its stored plan names. Undefined when the config no
   * longer has it.
   */
  route(modelId: string, key: string): RouteEndpoint | undefined;
  /** The model's category (LLM, IMAGE, VIDEO, EMBEDDING), or undefined when unknown. */
  category(modelId: string): ModelConfig['category'] | undefined;
}
