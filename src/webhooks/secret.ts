/**
 * Signing secrets in the Standard Webhooks format: `whsec_` and the base64 of random bytes
 * (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md,
 * "Signature scheme"), which the `standardwebhooks` libraries take as they are.
 */
import { randomBytes } from 'node:crypto';

/** 32 bytes: the HMAC-SHA256 key length, within the 24 to 64 bytes the format asks for. */
const SECRET_BYTES = 32;

export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}
