/**
 * Canonical video generation: what the videos dialect decodes into and every video protocol
 * translates to and from. Video is always asynchronous: a protocol starts an upstream operation,
 * looks at it until it ends, and hands over the finished file. As elsewhere, a field that is
 * `undefined` was not sent.
 */
import type { GatewayError } from '../core/errors.ts';

/** The `extra_body.cloud_a` group: options of Google Veo-style upstreams. */
export interface CloudAVideoOptions {
  readonly negativePrompt?: string;
  readonly seed?: number;
  readonly enhancePrompt?: boolean;
}

/** The `extra_body.gpu_pool` group: options of diffusion queue upstreams. */
export interface GpuPoolVideoOptions {
  /** `<W>x<H>`, as an image size. */
  readonly size?: string;
  /** Frame rate and frame count come together (the request is refused otherwise). */
  readonly frames?: { readonly fps: number; readonly count: number };
  readonly numInferenceSteps?: number;
  readonly seed?: number;
  readonly negativePrompt?: string;
}

/** A request carries at most one provider's option group; the route's protocol must take it. */
export type VideoProviderOptions =
  | { readonly group: 'cloud_a'; readonly options: CloudAVideoOptions }
  | { readonly group: 'gpu_pool'; readonly options: GpuPoolVideoOptions };

export type VideoOptionGroup = VideoProviderOptions['group'];

/** Parameters of a video request that policy or a protocol can reject by name. */
export type VideoParam = 'duration' | 'pricingVariant' | 'prompt' | 'user';

export interface CanonicalVideoRequest {
  /** The model name as the client wrote it (an id or an alias). */
  readonly model: string;
  /** The videos API has no `models` fallback list. */
  readonly fallbackModels: readonly string[];
  readonly stream: false;
  readonly prompt: string;
  /** Seconds, as the client asked; undefined: the route's default (src/policy/videos.ts). */
  readonly duration?: number;
  /** A key of the model's `pricing.variants`; undefined: the per-second price. */
  readonly pricingVariant?: string;
  readonly providerOptions?: VideoProviderOptions;
  readonly user?: string;
}

/**
 * A started upstream operation: what its protocol needs to look at it again, as plain JSON data.
 * The job stores it as soon as the upstream accepted the work, so that a worker taking the job
 * over after a crash goes on polling it instead of starting a second, paid, generation.
 */
export interface VideoOperation {
  /** The upstream's name or id of the operation. */
  readonly id: string;
  /** Anything else the protocol needs (a status URL, a result URL), JSON only. */
  readonly [detail: string]: unknown;
}

/** The finished file of an operation, not yet fetched. */
export interface UpstreamVideo {
  /** Seconds of video delivered, when the upstream says; else the requested duration is taken as delivered. */
  readonly durationSeconds?: number;
  /** The file's MIME type (`video/mp4`). */
  readonly contentType: string;
  /** Fetches the bytes (a download, or base64 the upstream sent inline). */
  fetch(): Promise<Uint8Array | AsyncIterable<Uint8Array>>;
}

/** What one look at an operation tells. */
export type OperationState =
  /** Still going; `retryAfterMs` when the provider said how long to wait before the next look (Retry-After). */
  | { readonly status: 'running'; readonly retryAfterMs?: number }
  | { readonly status: 'succeeded'; readonly video: UpstreamVideo }
  /** The upstream reports the generation failed (a GatewayError says how, for the job's `error`). */
  | { readonly status: 'failed'; readonly error: GatewayError }
  /** The upstream cancelled it (an operator, a moderation system): nothing is charged. */
  | { readonly status: 'cancelled' };
