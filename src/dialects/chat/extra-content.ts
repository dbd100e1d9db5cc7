/**
 * Provider signatures on tool calls, in the chat dialect's `extra_content` object. The chat wire has
 * no field for them, so the OpenAI-compatible convention Gemini uses (`extra_content.google.
 * thought_signature`) is followed, with one namespace per provider family.
 */
import type { OpaqueProviderData } from '../../canonical/index.ts';

const NAMESPACES = {
  gemini: { namespace: 'google', field: 'thought_signature' },
  anthropic: { namespace: 'anthropic', field: 'signature' },
  openai: { namespace: 'openai', field: 'encrypted_content' },
} as const satisfies Record<OpaqueProviderData['family'], { namespace: string; field: string }>;

/** The object a client sees: the provider's own extra content when there is one, else the signature. */
export function extraContentOf(
  extraContent: Readonly<Record<string, unknown>> | undefined,
  signature: OpaqueProviderData | undefined,
): Readonly<Record<string, unknown>> | undefined {
  if (extraContent) return extraContent;
  if (!signature) return undefined;
  const { namespace, field } = NAMESPACES[signature.family];
  return { [namespace]: { [field]: signature.value } };
}

/** The signature inside a replayed `extra_content`, when it holds one. */
export function signatureOf(extraContent: Readonly<Record<string, unknown>> | undefined): OpaqueProviderData | undefined {
  if (!extraContent) return undefined;
  for (const family of Object.keys(NAMESPACES) as OpaqueProviderData['family'][]) {
    const { namespace, field } = NAMESPACES[family];
    const group = extraContent[namespace];
    const value = typeof group === 'object' && group !== null ? (group as Record<string, unknown>)[field] : undefined;
    if (typeof value === 'string') return { family, value };
  }
  return undefined;
}
