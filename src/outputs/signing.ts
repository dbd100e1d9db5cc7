/**
 * Signed output URLs: `…/v1/outputs/{requestId}/files/{name}?expires=<epoch seconds>&signature=<…>`.
 * The signature is HMAC-SHA256, with the server's output secret, over the URL's path and its expiry,
 * so that neither can be changed without the secret; every instance that shares the secret serves
 * every URL. A URL is valid until its expiry and refused after it, however often it is replayed.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** How long a signed URL is valid: signed afresh on each retrieval of the stored request. */
export const SIGNED_URL_LIFETIME_MS = 10 * 60 * 1000;

/** base64url of the 32 bytes of an HMAC-SHA256. */
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;
/** Epoch seconds as decimal digits, no sign, no exponent. */
const EXPIRES = /^[1-9]\d{0,11}$/;

function mac(secret: Uint8Array, path: string, expires: number): Buffer {
  // The newline cannot occur in a path, so (path, expires) pairs never share a message.
  return createHmac('sha256', secret).update(`${path}\n${expires}`).digest();
}

export function signPath(secret: Uint8Array, path: string, expires: number): string {
  return mac(secret, path, expires).toString('base64url');
}

export type SignatureCheck = 'valid' | 'expired' | 'invalid';

/**
 * Whether `signature` signs `path` until `expiresText` (as the query carried them) at `now` (epoch
 * ms). A malformed or wrong signature is `invalid`; a correct one past its expiry is `expired`.
 */
export function checkSignature(secret: Uint8Array, path: string, expiresText: unknown, signature: unknown, now: number): SignatureCheck {
  if (typeof expiresText !== 'string' || typeof signature !== 'string') return 'invalid';
  if (!EXPIRES.test(expiresText) || !SIGNATURE.test(signature)) return 'invalid';
  const expires = Number(expiresText);
  // The text is compared, not the bytes it decodes to: 43 base64url characters carry 258 bits for
  // 256, so three other last characters decode to the same bytes. Only the canonical text is valid.
  const given = Buffer.from(signature, 'latin1');
  const expected = Buffer.from(signPath(secret, path, expires), 'latin1');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  return expires * 1000 <= now ? 'expired' : 'valid';
}
