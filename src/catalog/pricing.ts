/**
 * The public `pricing` object of a model in one view (docs/catalog.md, "Pricing": rules 1–5 and
 * long context).
 *
 * - Only endpoints the view may use count, and pinned endpoints never set a public price (rule 5).
 * - Standard tokens: the one endpoint with the lowest input + output sum supplies input, output and
 *   its own cache rates (reads, 5-minute and 1-hour writes); minimums of different endpoints are
 *   never combined (rule 2).
 * - Long context: chosen independently among endpoints that have a long-context tier, by the
 *   lowest long-context input + output sum, with that endpoint's threshold and cache-read rate.
 * - Media: per_image and per_second each from the endpoint with the lowest rate in that unit;
 *   variants each from the lowest offer with the same key and the same meta.
 * - `list` carries, for each shown rate, the list price of the endpoint that supplied it.
 * - `conditions`: the consent the supplying endpoints need, combined over every shown rate.
 * - `is_free`: only when token rates are shown and every shown rate is zero; never false.
 */
import type { PricingUnit } from '../config/schema.ts';
import type { Picos } from '../core/money.ts';
import { consentNeeded } from './consent.ts';
import { listAndDiscount, type ListedRate } from './discount.ts';
import type { CatalogEndpoint } from './endpoints.ts';
import { lowestOffer, type Offer } from './lowest.ts';
import { canonicalJson } from './objects.ts';
import { displayRate, displayUsd, perTokenToPerMillion, rateOf, type RateKey } from './rate-keys.ts';
import type { ConsentCondition, LongContextPricing, ModelPricing } from './schemas.ts';
import type { TokenRates } from './types.ts';

const STANDARD_KEYS = ['input_per_1m', 'output_per_1m', 'cache_read_per_1m', 'cache_write_per_1m', 'cache_write_1h_per_1m'] as const;

interface ShownRate {
  readonly key: RateKey;
  readonly amount: Picos;
  readonly source: CatalogEndpoint;
}

interface VariantOffer extends Offer {
  readonly key: string;
  readonly meta: Readonly<Record<string, unknown>>;
}

export function publicPricing(unit: PricingUnit, endpoints: readonly CatalogEndpoint[]): ModelPricing {
  const candidates = endpoints.filter((endpoint) => !endpoint.pinned);
  // Embedding models have no output rate on any route: their offers are compared by input alone.
  const inputOnly = candidates.every((endpoint) => endpoint.route.prices.standard.output === undefined);
  const standard = lowestOffer(offers(candidates, (endpoint) => (inputOnly ? endpoint.route.prices.standard.input : pairSum(endpoint.route.prices.standard))));
  const longContext = lowestOffer(offers(candidates, (endpoint) => pairSum(endpoint.route.prices.longContext)));
  const image = lowestOffer(offers(candidates, (endpoint) => endpoint.route.prices.perImage));
  const second = lowestOffer(offers(candidates, (endpoint) => endpoint.route.prices.perSecond));
  const variants = lowestVariants(candidates);

  const shown: ShownRate[] = [
    ...shownRates(standard?.source, STANDARD_KEYS),
    ...shownRates(image?.source, ['per_image']),
    ...shownRates(second?.source, ['per_second']),
  ];
  const longContextRates = longContext?.source.route.prices.longContext;
  const sources = [standard, longContext, image, second, ...variants].flatMap((offer) => (offer ? [offer.source] : []));
  const free =
    standard !== undefined &&
    shown.every((rate) => rate.amount === 0n) &&
    variants.every((variant) => variant.amount === 0n) &&
    (longContextRates === undefined || tokenRatesAreZero(longContextRates));

  const conditions = combinedConditions(sources);
  return {
    unit,
    ...(conditions.length > 0 ? { conditions } : {}),
    ...(free ? { is_free: true as const } : {}),
    ...Object.fromEntries(shown.map((rate) => [rate.key, displayRate(rate.key, rate.amount)])),
    ...(longContextRates ? { long_context: longContextRow(longContextRates) } : {}),
    ...listAndDiscount(shown.flatMap(listedRate)),
    ...(variants.length > 0 ? { variants: variants.map((variant) => ({ key: variant.key, price: displayUsd(variant.amount), meta: variant.meta })) } : {}),
  };
}

function offers(candidates: readonly CatalogEndpoint[], amountOf: (endpoint: CatalogEndpoint) => Picos | undefined): Offer[] {
  return candidates.flatMap((source) => {
    const amount = amountOf(source);
    return amount === undefined ? [] : [{ amount, source }];
  });
}

/** A complete input/output pair's sum; undefined when either side is missing. */
function pairSum(rates: TokenRates | undefined): Picos | undefined {
  return rates?.input === undefined || rates.output === undefined ? undefined : rates.input + rates.output;
}

function shownRates(source: CatalogEndpoint | undefined, keys: readonly RateKey[]): ShownRate[] {
  if (!source) return [];
  return keys.flatMap((key) => {
    const amount = rateOf(source.route.prices, key);
    return amount === undefined ? [] : [{ key, amount, source }];
  });
}

function listedRate(rate: ShownRate): ListedRate[] {
  const list = rate.source.display.list[rate.key];
  return list === undefined ? [] : [{ key: rate.key, shown: rate.amount, list }];
}

/** One offer per distinct (key, meta), in order of first appearance, each the lowest of its group. */
function lowestVariants(candidates: readonly CatalogEndpoint[]): VariantOffer[] {
  const groups = new Map<string, VariantOffer[]>();
  for (const source of candidates) {
    for (const variant of source.display.variants) {
      const group = `${variant.key}\u0000${canonicalJson(variant.meta)}`;
      const offer = { key: variant.key, meta: variant.meta, amount: variant.price, source };
      const members = groups.get(group);
      if (members) members.push(offer);
      else groups.set(group, [offer]);
    }
  }
  return [...groups.values()].flatMap((members) => lowestOffer(members) ?? []);
}

function longContextRow(rates: NonNullable<CatalogEndpoint['route']['prices']['longContext']>): LongContextPricing {
  // pairSum() chose this tier, so both rates exist.
  const input = perTokenToPerMillion(rates.input as Picos);
  const output = perTokenToPerMillion(rates.output as Picos);
  return {
    threshold_tokens: rates.thresholdTokens,
    base_input_per_1m: input,
    base_output_per_1m: output,
    input_per_1m: input,
    output_per_1m: output,
    ...(rates.cacheRead === undefined ? {} : { cache_read_per_1m: perTokenToPerMillion(rates.cacheRead) }),
  };
}

function tokenRatesAreZero(rates: TokenRates): boolean {
  return [rates.input, rates.output, rates.cacheRead, rates.cacheWrite, rates.cacheWrite1h].every((rate) => rate === undefined || rate === 0n);
}

function combinedConditions(sources: readonly CatalogEndpoint[]): ConsentCondition[] {
  const needed = new Set(sources.flatMap((source) => consentNeeded(source.route)));
  return (['community_supply', 'training_use'] as const).filter((condition) => needed.has(condition));
}
