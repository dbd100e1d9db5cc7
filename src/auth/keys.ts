/**
 * API key material. A key is `gateway_` + base64url of 32 random bytes; only its SHA-256 is stored,
 * so a database leak does not leak usable keys, and the plaintext is shown once at creation.
 */
import { hash } from 'node:crypto';
import { randomToken } from '../core/ids.ts';

export const API_KEY_PREFIX = 'gateway_';
/** Bytes of randomness in a key (256 bits). */
const KEY_RANDOM_BYTES = 32;
/** Characters shown in listings: the prefix plus four characters of the secret. */
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 4;

export interface GeneratedApiKey {
  /** The full key; hand it to the caller once and never store it. */
  readonly plaintext: string;
  /** SHA-256 of the plaintext, hex: what the store keeps and looks keys up by. */
  readonly hash: string;
  /** `gateway_AbCd`, safe to display. */
  readonly displayPrefix: string;
}

export function generateApiKey(): GeneratedApiKey {
  const plaintext = API_KEY_PREFIX + randomToken(KEY_RANDOM_BYTES);
  return { plaintext, hash: hashApiKey(plaintext), displayPrefix: plaintext.slice(0, DISPLAY_PREFIX_LENGTH) };
}

export function hashApiKey(plaintext: string): string {
  return hash('sha256', plaintext, 'hex');
}
