/**
 * The gateway's own request fields, the same in every text dialect: the `models` fallback list,
 * the routing hints (`provider`, or `gateway.provider`) and the caching options (`gateway.cache`,
 * `gateway.cache_ttl`). Their schemas and their decoding live here once.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { CacheOptions, ProviderPreferences } from '../canonical/index.ts';
import { StrictObject, StringEnum } from './schema-kit.ts';

export const MAX_FALLBACK_MODELS = 5;

export const ProviderPreferencesSchema = StrictObject(
  {
    sort: Type.Optional(StringEnum(['price', 'latency', 'throughput'])),
    allow_fallbacks: Type.Optional(Type.Boolean()),
    // Former provider-name selectors: accepted for compatibility and ignored (docs/chat-completions.md).
    only: Type.Optional(Type.Array(Type.String())),
    order: Type.Optional(Type.Array(Type.String())),
    ignore: Type.Optional(Type.Array(Type.String())),
  },
  { description: 'Routing hints.' },
);

export const GatewayOptionsSchema = StrictObject({
  cache: Type.Optional(StringEnum(['on', 'off'])),
  cache_ttl: Type.Optional(StringEnum(['5m', '1h'])),
  provider: Type.Optional(ProviderPreferencesSchema),
});

export const FallbackModelsSchema = Type.Array(Type.String({ minLength: 1 }), {
  maxItems: MAX_FALLBACK_MODELS,
  description: 'Fallback models, tried in order before any credit is reserved.',
});

/** The fields of a body that this module decodes. */
export interface GatewayOptionsBody {
  readonly model: string;
  readonly models?: readonly string[];
  readonly provider?: Static<typeof ProviderPreferencesSchema>;
  readonly gateway?: Static<typeof GatewayOptionsSchema>;
}

/** The `models` list after the primary model, without repeats (each is tried once). */
export function fallbackModels(body: GatewayOptionsBody): string[] {
  const seen = new Set([body.model]);
  const result: string[] = [];
  for (const name of body.models ?? []) {
    if (seen.has(name)) continue;
    seen.add(name);
    result.push(name);
  }
  return result;
}

/** `gateway.provider` and the top-level `provider` say the same thing; the top-level one wins per field. */
export function providerPreferences(body: GatewayOptionsBody): ProviderPreferences | undefined {
  const nested = body.gateway?.provider;
  const top = body.provider;
  const sort = top?.sort ?? nested?.sort;
  const allowFallbacks = top?.allow_fallbacks ?? nested?.allow_fallbacks;
  return sort === undefined && allowFallbacks === undefined ? undefined : { sort, allowFallbacks };
}

export function cacheOptions(body: GatewayOptionsBody): CacheOptions | undefined {
  const gateway = body.gateway;
  return gateway?.cache === undefined && gateway?.cache_ttl === undefined ? undefined : { mode: gateway.cache, ttl: gateway.cache_ttl };
}
