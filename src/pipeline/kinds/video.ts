/**
 * Video as a kind of output. A request is priced per second of video (the route's `per_second`, or
 * its pricing variant's price per second): held for the seconds asked for (the client's duration
 * or the route's default) and charged for the seconds delivered, never more than were held.
 * Validation is the video policy with the route protocol's option group (src/policy/videos.ts).
 * A video is not one protocol call but an operation the video job drives (src/jobs/video-job.ts);
 * the core prices, holds, settles and records it all the same.
 */
import { ZERO_USAGE } from '../../canonical/index.ts';
import type { CanonicalVideoRequest } from '../../canonical/index.ts';
import type { EndpointPrices } from '../../catalog/types.ts';
import { errors } from '../../core/errors.ts';
import type { Picos } from '../../core/money.ts';
import { checkVideoRoute, videoDuration, videoSecondPrice } from '../../policy/videos.ts';
import { VIDEO, type VideoProtocol } from '../../protocols/video-protocol.ts';
import type { OutputKind } from '../kind.ts';

/** What a video is billed for: whole seconds delivered, at the per-second price or a variant's. */
export interface VideoMeter {
  readonly seconds: number;
  readonly variant?: string;
}

/** What an ended operation delivered, as far as billing cares. */
export interface DeliveredVideo {
  /** Seconds of video, as the upstream reported them (or the seconds asked for, when it does not). */
  readonly seconds: number;
}

export interface VideoTypes {
  readonly request: CanonicalVideoRequest;
  readonly result: DeliveredVideo;
  readonly meter: VideoMeter;
  readonly estimate: undefined;
  readonly protocol: VideoProtocol;
}

export const VIDEO_OUTPUT: OutputKind<VideoTypes> = {
  name: 'video',
  category: 'VIDEO',
  capability: VIDEO,
  unservable: 'video generation',
  requestBytes: true,
  estimate: () => undefined,
  check: (request, endpoint, protocol) => checkVideoRoute(request, endpoint, protocol.optionGroup),
  // Policy has checked that the route has the price (per second, or the variant's).
  quote: (request, endpoint) => BigInt(videoDuration(request, endpoint)) * (videoSecondPrice(request, endpoint) ?? 0n) + (endpoint.prices.perRequest ?? 0n),
  meter(request, result, endpoint) {
    // A part second started is a second delivered; never more than the seconds held for.
    const seconds = Math.min(Math.ceil(result.seconds), videoDuration(request, endpoint));
    if (!(seconds > 0)) throw errors.upstreamReported('the upstream delivered no video', false);
    return request.pricingVariant === undefined ? { seconds } : { seconds, variant: request.pricingVariant };
  },
  cost: (prices, meter) => videoCost(prices, meter),
  logged: (meter) => ({ usage: ZERO_USAGE, searchUnits: 0, videoSeconds: meter.seconds }),
};

function videoCost(prices: EndpointPrices, meter: VideoMeter): Picos {
  const perSecond = meter.variant === undefined ? prices.perSecond : prices.variants.get(meter.variant);
  return BigInt(meter.seconds) * (perSecond ?? 0n) + (prices.perRequest ?? 0n);
}
