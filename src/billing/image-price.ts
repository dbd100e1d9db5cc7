/**
 * Image prices (docs/images.md, "Billing"). An image route is priced per image (`per_image`), or
 * per image of a variant: a variant's key names a quality (`high`), a size (`1024x1536`) or both
 * (`high:1024x1536`), and the most specific variant that matches what the upstream was asked for
 * prices each image. A `per_request` route adds its fee once per call.
 *
 * The quote holds the dearest price the request could end up paying: with no size (or `auto`) or
 * no quality asked for, every variant that could apply is a candidate; a `standard` or `hd` that a
 * family aliases may be billed as itself or as its alias.
 */
import type { ImageQuality } from '../canonical/index.ts';
import type { EndpointPrices } from '../catalog/types.ts';
import type { Picos } from '../core/money.ts';

/** What decides the price of one image. */
export interface ImagePriceKey {
  readonly quality?: string;
  readonly size?: string;
}

const ALIASES_OF: Readonly<Partial<Record<ImageQuality, string>>> = { standard: 'medium', hd: 'high' };

/**
 * The price of one image asked for at this quality and size. With both known: the two-part variant,
 * else the dearer one-part variant that matches, else `per_image`. With a part unknown (the
 * provider chose): the dearest variant it could be.
 */
export function imagePrice(prices: EndpointPrices, key: ImagePriceKey): Picos {
  const base = prices.perImage ?? 0n;
  if (key.quality !== undefined && key.size !== undefined) {
    const exact = prices.variants.get(`${key.quality}:${key.size}`);
    if (exact !== undefined) return exact;
  }
  let matched: Picos | undefined;
  for (const [variant, price] of prices.variants) {
    const parts = variantParts(variant);
    const fits =
      (parts.quality === undefined || key.quality === undefined || parts.quality === key.quality) &&
      (parts.size === undefined || key.size === undefined || parts.size === key.size);
    // With both parts known, only one-part variants are left to match (the exact one was looked up).
    const usable = key.quality !== undefined && key.size !== undefined ? parts.quality === undefined || parts.size === undefined : true;
    if (fits && usable && (matched === undefined || price > matched)) matched = price;
  }
  return matched ?? base;
}

/** A variant key's parts: `high`, `1024x1536` or `high:1024x1536`. */
function variantParts(variant: string): ImagePriceKey {
  const [first, second] = variant.split(':');
  if (second !== undefined) return { quality: first, size: second };
  return SIZE.test(first) ? { size: first } : { quality: first };
}

const SIZE = /^\d+x\d+$/;

/** The worst-case price of one image of a request, before any route resolved its quality or size. */
export function dearestImagePrice(prices: EndpointPrices, quality: ImageQuality | undefined, size: string | undefined): Picos {
  const sized = size === undefined || size === 'auto' ? undefined : size;
  const qualities = quality === undefined ? [undefined] : [quality, ALIASES_OF[quality]].filter((value) => value !== undefined);
  let dearest = 0n;
  for (const candidate of qualities) {
    const price = imagePrice(prices, { quality: candidate, size: sized });
    if (price > dearest) dearest = price;
  }
  return dearest;
}
