/**
 * A reasoning item travels through the canonical model as an opaque OpenAI signature: its `rs_` id
 * and, when present, its `encrypted_content`, so that a later turn can pass it back unchanged
 * (PROTOCOLS.md §9.2: signatures go back to the same family only).
 */
import type { OpaqueProviderData } from '../../canonical/index.ts';

export interface ReasoningItemReference {
  readonly id: string;
  readonly encrypted_content?: string;
}

export function reasoningSignature(id: string | undefined, encrypted: string | null | undefined): OpaqueProviderData | undefined {
  if (id === undefined) return undefined;
  const reference: ReasoningItemReference = { id, ...(encrypted ? { encrypted_content: encrypted } : {}) };
  return { family: 'openai', value: JSON.stringify(reference) };
}

/** The item a signature came from; undefined for another family's signature or an unreadable one. */
export function reasoningReference(signature: OpaqueProviderData | undefined): ReasoningItemReference | undefined {
  if (signature?.family !== 'openai') return undefined;
  try {
    const parsed = JSON.parse(signature.value) as Partial<ReasoningItemReference>;
    return typeof parsed.id === 'string' ? { id: parsed.id, ...(typeof parsed.encrypted_content === 'string' && { encrypted_content: parsed.encrypted_content }) } : undefined;
  } catch {
    return undefined;
  }
}
