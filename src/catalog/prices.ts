/**
 * Converts an endpoint's configured prices (decimal USD in the config file) into exact pico-USD:
 * the billing prices every other part of the gateway uses (EndpointPrices), plus what only the
 * public catalog shows (list prices and variant metadata).
 */
import { perMillionRateToPicosPerToken, usdToPicos, type Picos } from '../core/money.ts';
import { searchBillingOf, type EndpointConfig, type EndpointPricingConfig } from '../config/schema.ts';
import { parseRate, RATE_KEYS, type RateKey, type RateSet } from './rate-keys.ts';
import type { EndpointPrices, TokenRates } from './types.ts';

/** A video variant as the catalog shows it. */
export interface PricedVariant {
  readonly key: string;
  readonly price: Picos;
  readonly meta: Readonly<Record<string, unknown>>;
}

/** Prices that exist only for display: never billed. */
export interface DisplayPrices {
  /** Provider list prices before discount, per public rate field. */
  readonly list: RateSet;
  readonly variants: readonly PricedVariant[];
}

export function endpointPrices(endpoint: EndpointConfig): EndpointPrices {
  const pricing = endpoint.pricing;
  const longContext = pricing.long_context;
  return {
    unit: pricing.unit,
    standard: tokenRates(pricing),
    longContext: longContext && {
      thresholdTokens: longContext.threshold_tokens,
      ...tokenRates(longContext),
    },
    perImage: optionalUsd(pricing.per_image),
    perSecond: optionalUsd(pricing.per_second),
    perRequest: optionalUsd(pricing.per_request),
    variants: new Map((pricing.variants ?? []).map((variant) => [variant.key, usdToPicos(variant.price)])),
    searchPerUnit: optionalUsd(endpoint.search_price_per_query),
    searchBilling: searchBillingOf(endpoint),
  };
}

/** How the endpoint counts search units; per executed query unless it says otherwise. */

export function displayPrices(pricing: EndpointPricingConfig): DisplayPrices {
  const list: Partial<Record<RateKey, Picos>> = {};
  for (const key of RATE_KEYS) {
    const value = pricing.list?.[key];
    if (value !== undefined) list[key] = parseRate(key, value);
  }
  const variants = (pricing.variants ?? []).map((variant) => ({
    key: variant.key,
    price: usdToPicos(variant.price),
    meta: variant.meta ?? {},
  }));
  return { list, variants };
}

interface TokenRateFields {
  readonly input_per_1m?: number;
  readonly output_per_1m?: number;
  readonly cache_read_per_1m?: number;
  readonly cache_write_per_1m?: number;
  readonly cache_write_1h_per_1m?: number;
}

function tokenRates(fields: TokenRateFields): TokenRates {
  return {
    input: optionalTokenRate(fields.input_per_1m),
    output: optionalTokenRate(fields.output_per_1m),
    cacheRead: optionalTokenRate(fields.cache_read_per_1m),
    cacheWrite: optionalTokenRate(fields.cache_write_per_1m),
    cacheWrite1h: optionalTokenRate(fields.cache_write_1h_per_1m),
  };
}

function optionalTokenRate(value: number | undefined): Picos | undefined {
  return value === undefined ? undefined : perMillionRateToPicosPerToken(value);
}

function optionalUsd(value: number | undefined): Picos | undefined {
  return value === undefined ? undefined : usdToPicos(value);
}
