/**
 * Finds the API key in a request. Two equivalent headers carry it (docs/authentication.md, "Sending
 * the key"): `Authorization: Bearer <key>` (OpenAI-style clients, current Anthropic SDKs) and
 * `x-api-key: <key>` (older messages-style clients). A Bearer token wins when both are present.
 */
import type { IncomingHttpHeaders } from 'node:http';

export type PresentedCredential =
  | { readonly kind: 'missing' }
  /** A header was sent but does not hold a usable key (wrong scheme, empty token, absurd length). */
  | { readonly kind: 'malformed' }
  | { readonly kind: 'key'; readonly key: string };

/** Longer than any key we issue by a wide margin; longer values are rejected before hashing. */
const MAX_KEY_LENGTH = 256;

export function presentedCredential(headers: IncomingHttpHeaders): PresentedCredential {
  const authorization = headers.authorization;
  if (authorization !== undefined && authorization !== '') {
    const match = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (match) return asKey(match[1]);
    // A non-Bearer Authorization header beside x-api-key (a proxy's own auth) defers to x-api-key.
    if (headers['x-api-key'] === undefined) return { kind: 'malformed' };
  }
  const apiKeyHeader = headers['x-api-key'];
  if (apiKeyHeader === undefined) return { kind: 'missing' };
  const value = Array.isArray(apiKeyHeader) ? apiKeyHeader[0] : apiKeyHeader;
  return asKey(value.trim());
}

function asKey(value: string): PresentedCredential {
  if (value === '' || value.length > MAX_KEY_LENGTH) return { kind: 'malformed' };
  return { kind: 'key', key: value };
}
