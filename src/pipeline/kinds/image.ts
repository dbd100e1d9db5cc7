/**
 * Images as a kind of output: generations and edits. A request is priced per image (by the
 * route's `per_image` and its variants; src/billing/image-price.ts), held for every image asked for
 * at the dearest price it could end up paying, and charged for the images delivered at the quality
 * and size the upstream was asked for. Validation is the image policy with the route protocol's
 * family (src/policy/images.ts).
 */
import type { CanonicalImageRequest, CanonicalImageResult, Usage } from '../../canonical/index.ts';
import { ZERO_USAGE } from '../../canonical/index.ts';
import type { EndpointPrices } from '../../catalog/types.ts';
import { dearestImagePrice, imagePrice } from '../../billing/image-price.ts';
import { errors } from '../../core/errors.ts';
import type { Picos } from '../../core/money.ts';
import { checkImageRoute } from '../../policy/images.ts';
import { IMAGES, type ImagesProtocol } from '../../protocols/image-protocol.ts';
import type { OutputKind } from '../kind.ts';

/** What an image call is billed for. */
export interface ImageMeter {
  /** Images delivered. */
  readonly images: number;
  /** The quality and size they were asked for at (undefined: the provider chose). */
  readonly quality?: string;
  readonly size?: string;
  /** Tokens the upstream reported, logged (the price is per image). */
  readonly usage: Usage;
}

export interface ImageTypes {
  readonly request: CanonicalImageRequest;
  readonly result: CanonicalImageResult;
  readonly meter: ImageMeter;
  readonly estimate: undefined;
  readonly protocol: ImagesProtocol;
}

export const IMAGE: OutputKind<ImageTypes> = {
  name: 'image',
  category: 'IMAGE',
  capability: IMAGES,
  unservable: 'image generation',
  requestBytes: true,
  estimate: () => undefined,
  check: (request, endpoint, protocol) => checkImageRoute(request, endpoint, protocol.family),
  quote: (request, endpoint) => BigInt(request.n) * dearestImagePrice(endpoint.prices, request.quality, request.size) + (endpoint.prices.perRequest ?? 0n),
  meter(_request, result) {
    // Every image withheld by the upstream's filters: a failure, charged nothing.
    if (result.images.length === 0) throw errors.upstreamReported('the upstream delivered no image (all were filtered)', false);
    const usage = result.usage ? { ...ZERO_USAGE, inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens } : ZERO_USAGE;
    return { images: result.images.length, quality: result.quality, size: result.size, usage };
  },
  cost: (prices, meter) => imageCost(prices, meter),
  logged: (meter) => ({ usage: meter.usage, searchUnits: 0, images: meter.images }),
};

function imageCost(prices: EndpointPrices, meter: ImageMeter): Picos {
  return BigInt(meter.images) * imagePrice(prices, { quality: meter.quality, size: meter.size }) + (prices.perRequest ?? 0n);
}
