/**
 * The `video` capability: asynchronous video generation. A provider kind that serves video
 * implements this interface; the video job (src/jobs/video-job.ts) drives it: `start` once, then
 * `poll` with backoff until the operation ends, surviving restarts in between (the operation is
 * stored with the job). Each protocol declares which `extra_body` option group its wire format
 * takes, so that policy refuses the others before any credit moves (src/policy/videos.ts).
 */
import type { CanonicalVideoRequest, OperationState, VideoOperation, VideoOptionGroup } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import { defineCapability } from './capability.ts';
import type { CallContext } from './protocol.ts';

/** A video request as one route is asked for it: the duration resolved by the route's rules. */
export interface VideoCall {
  readonly request: CanonicalVideoRequest;
  /** Seconds of video to generate (the client's duration, or the route's default). */
  readonly durationSeconds: number;
  /** The `meta` of the selected pricing variant (e.g. `{resolution: "1080p"}`), forwarded where the wire has the field. */
  readonly variantMeta?: Readonly<Record<string, unknown>>;
}

export interface VideoProtocol {
  /** The `extra_body` group this upstream takes; null: none. */
  readonly optionGroup: VideoOptionGroup | null;
  /**
   * Starts the generation. Resolves once the upstream has accepted the work, with the handle to
   * poll it by. A failure before that is an ordinary upstream error (the next route may be tried).
   */
  start(call: VideoCall, endpoint: RouteEndpoint, context: CallContext): Promise<VideoOperation>;
  /**
   * One look at the operation. A transient failure (5xx, 429, a reset connection) is thrown as a
   * retryable GatewayError; the job looks again later rather than failing.
   */
  poll(operation: VideoOperation, endpoint: RouteEndpoint, context: CallContext): Promise<OperationState>;
}

export const VIDEO = defineCapability<VideoProtocol>('video');
