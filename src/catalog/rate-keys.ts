/**
 * The rate fields of the public pricing object (docs/catalog.md, "Pricing") and how each one reads
 * from an endpoint's exact prices. Token rates are held as pico-USD per token and shown as USD per
 * million tokens; media rates are pico-USD per unit and shown as USD per unit.
 */
import { formatUsd, perMillionRateToPicosPerToken, usdToPicos, type Picos } from '../core/money.ts';
import type { EndpointPrices } from './types.ts';

export const RATE_KEYS = [
  'input_per_1m',
  'output_per_1m',
  'cache_read_per_1m',
  'cache_write_per_1m',
  'cache_write_1h_per_1m',
  'per_image',
  'per_second',
] as const;
export type RateKey = (typeof RATE_KEYS)[number];

/** A partial set of rates in pico-USD, keyed by public field name (used for list prices). */
export type RateSet = Readonly<Partial<Record<RateKey, Picos>>>;

/** The endpoint's standard-tier (or media) rate for a public field; undefined when it has none. */
export function rateOf(prices: EndpointPrices, key: RateKey): Picos | undefined {
  switch (key) {
    case 'input_per_1m':
      return prices.standard.input;
    case 'output_per_1m':
      return prices.standard.output;
    case 'cache_read_per_1m':
      return prices.standard.cacheRead;
    case 'cache_write_per_1m':
      return prices.standard.cacheWrite;
    case 'cache_write_1h_per_1m':
      return prices.standard.cacheWrite1h;
    case 'per_image':
      return prices.perImage;
    case 'per_second':
      return prices.perSecond;
    default: {
      const unreachable: never = key;
      throw new Error(`unknown rate key ${String(unreachable)}`);
    }
  }
}

function isTokenRate(key: RateKey): boolean {
  return key.endsWith('_per_1m');
}

/** Parses a configured rate exactly: per-million token rates and plain USD media rates. */
export function parseRate(key: RateKey, value: number): Picos {
  return isTokenRate(key) ? perMillionRateToPicosPerToken(value) : usdToPicos(value);
}

/** The JSON number a client sees for a rate held in pico-USD. */
export function displayRate(key: RateKey, picos: Picos): number {
  return isTokenRate(key) ? perTokenToPerMillion(picos) : displayUsd(picos);
}

/** Pico-USD per token → USD per million tokens, as the configured decimal. */
export function perTokenToPerMillion(picosPerToken: Picos): number {
  return displayUsd(picosPerToken * 1_000_000n);
}

export function displayUsd(picos: Picos): number {
  return Number(formatUsd(picos));
}
