/**
 * The upstream timeouts of a route (docs/operations.md, "Timeouts"): an endpoint's `timeouts`
 * over its provider's, over the provider's older single `timeout_ms`, over the defaults below.
 * Resolved once when the catalog is built.
 */
import type { EndpointConfig, ProviderConfig } from '../config/schema.ts';

export interface UpstreamTimeouts {
  /** Establishing a connection (TCP and TLS). */
  readonly connectMs: number;
  /** From the request sent to the response's headers: for a plain answer, the whole answer. */
  readonly firstByteMs: number;
  /** The longest silence inside a response body (between two stream events). */
  readonly idleMs: number;
  /** The whole attempt, body included; undefined: no limit but the others. */
  readonly totalMs: number | undefined;
}

/** Used for what the config leaves out (first byte and idle: the official OpenAI client's 10 minutes). */
export const TIMEOUT_DEFAULTS: UpstreamTimeouts = { connectMs: 10_000, firstByteMs: 600_000, idleMs: 600_000, totalMs: undefined };

export function routeTimeouts(provider: ProviderConfig, endpoint: EndpointConfig): UpstreamTimeouts {
  const own = endpoint.timeouts ?? {};
  const shared = provider.timeouts ?? {};
  const single = provider.timeout_ms;
  return {
    connectMs: own.connect_ms ?? shared.connect_ms ?? Math.min(single ?? TIMEOUT_DEFAULTS.connectMs, TIMEOUT_DEFAULTS.connectMs),
    firstByteMs: own.first_byte_ms ?? shared.first_byte_ms ?? single ?? TIMEOUT_DEFAULTS.firstByteMs,
    idleMs: own.idle_ms ?? shared.idle_ms ?? single ?? TIMEOUT_DEFAULTS.idleMs,
    totalMs: own.total_ms ?? shared.total_ms ?? TIMEOUT_DEFAULTS.totalMs,
  };
}
