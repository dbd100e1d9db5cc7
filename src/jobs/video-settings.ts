/**
 * How video jobs follow their upstream operations (`videos` in the config; docs/video.md).
 */
import type { GatewayConfig } from '../config/schema.ts';

export interface VideoJobSettings {
  /** The first wait between two looks at an operation; each later wait doubles, up to `maxPollIntervalMs`. */
  readonly pollIntervalMs: number;
  readonly maxPollIntervalMs: number;
  /** An operation not done this long after its job was created is given up (the job fails, nothing is charged). */
  readonly timeoutMs: number;
}

export const DEFAULT_VIDEO_POLL_INTERVAL_MS = 2_000;
export const DEFAULT_VIDEO_MAX_POLL_INTERVAL_MS = 30_000;
/** Generations take seconds to minutes; an hour leaves room for a provider's queue. */
export const DEFAULT_VIDEO_TIMEOUT_SECONDS = 3_600;

export function videoJobSettings(config: GatewayConfig): VideoJobSettings {
  const pollIntervalMs = config.videos?.poll_interval_ms ?? DEFAULT_VIDEO_POLL_INTERVAL_MS;
  return {
    pollIntervalMs,
    maxPollIntervalMs: Math.max(pollIntervalMs, config.videos?.max_poll_interval_ms ?? DEFAULT_VIDEO_MAX_POLL_INTERVAL_MS),
    timeoutMs: (config.videos?.timeout_seconds ?? DEFAULT_VIDEO_TIMEOUT_SECONDS) * 1000,
  };
}
