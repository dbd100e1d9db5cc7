/**
 * The webhook settings of the config file (`webhooks:`), with their defaults filled in. The
 * defaults are stated here and in docs/webhooks.md ("Configuration"); test/webhooks/settings.test.ts
 * keeps the two the same.
 */
import type { GatewayConfig } from '../config/schema.ts';

export interface WebhookSettings {
  readonly allowPrivateAddresses: boolean;
  readonly timeoutMs: number;
  readonly concurrency: number;
  readonly pollIntervalMs: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
}

export const WEBHOOK_DEFAULTS = {
  allow_private_addresses: false,
  timeout_ms: 10_000,
  concurrency: 8,
  poll_interval_ms: 1_000,
  retry_base_ms: 10_000,
  retry_max_ms: 3_600_000,
} as const;

export function webhookSettings(config: Pick<GatewayConfig, 'webhooks'>): WebhookSettings {
  const webhooks = config.webhooks ?? {};
  const retryBaseMs = webhooks.retry_base_ms ?? WEBHOOK_DEFAULTS.retry_base_ms;
  return {
    allowPrivateAddresses: webhooks.allow_private_addresses ?? WEBHOOK_DEFAULTS.allow_private_addresses,
    timeoutMs: webhooks.timeout_ms ?? WEBHOOK_DEFAULTS.timeout_ms,
    concurrency: webhooks.concurrency ?? WEBHOOK_DEFAULTS.concurrency,
    pollIntervalMs: webhooks.poll_interval_ms ?? WEBHOOK_DEFAULTS.poll_interval_ms,
    retryBaseMs,
    // A base above the default cap raises the cap with it (the config check refuses only a cap set below the base).
    retryMaxMs: webhooks.retry_max_ms ?? Math.max(WEBHOOK_DEFAULTS.retry_max_ms, retryBaseMs),
  };
}
