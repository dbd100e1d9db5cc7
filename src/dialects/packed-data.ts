/**
 * Provider data a client must send back unchanged but that its dialect has no field for (a Gemini
 * thought signature, another family's reasoning signature, a tool call's `extra_content`), packed
 * into an opaque string the client replays as it received it: base64url of the JSON. Data that
 * does not read back (altered by the client) carries nothing; the provider then refuses the turn
 * as it would without it.
 */
import type { OpaqueProviderData } from '../canonical/index.ts';

const FAMILIES: ReadonlySet<string> = new Set<OpaqueProviderData['family']>(['openai', 'anthropic', 'gemini']);

export function pack(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function unpack(text: string): unknown {
  try {
    return JSON.parse(Buffer.from(text, 'base64url').toString());
  } catch {
    return undefined;
  }
}

/** A signature read back from unpacked data; undefined when it is not one. */
export function opaqueData(value: unknown): OpaqueProviderData | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { family, value: data } = value as Record<string, unknown>;
  return typeof family === 'string' && FAMILIES.has(family) && typeof data === 'string'
    ? { family: family as OpaqueProviderData['family'], value: data }
    : undefined;
}

/** A tool call's `extra_content` read back from unpacked data; undefined when it is not an object. */
export function extraContentOf(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
