/**
 * Provider data a Responses client must send back unchanged (docs/responses.md, "Provider data"):
 * a reasoning part's signature travels in the reasoning item's own `encrypted_content`, packed; a
 * tool call's signature or `extra_content` (Gemini needs its thought signature back with the next
 * turn) in the function call item's `x_gateway.provider_data`, the gateway's extension field.
 * Clients that append a response's `output` to their next `input` replay both as they are.
 */
import type { OpaqueProviderData, ToolCallPart } from '../../canonical/index.ts';
import { extraContentOf, opaqueData, pack, unpack } from '../packed-data.ts';

export interface FunctionCallExtension {
  readonly x_gateway?: { readonly provider_data: string };
}

export interface ReasoningExtension {
  readonly encrypted_content?: string;
}

type CallData = Pick<ToolCallPart, 'signature' | 'extraContent'>;

export function functionCallExtension(call: CallData): FunctionCallExtension {
  if (call.signature === undefined && call.extraContent === undefined) return {};
  return { x_gateway: { provider_data: pack({ signature: call.signature, extraContent: call.extraContent }) } };
}

/** What a replayed function call item carries back; nothing when it carries nothing readable. */
export function callDataOf(extension: { readonly x_gateway?: { readonly provider_data?: string } | null }): CallData {
  const packed = extension.x_gateway?.provider_data;
  if (packed === undefined) return {};
  const data = unpack(packed);
  if (typeof data !== 'object' || data === null) return {};
  const { signature, extraContent } = data as Record<string, unknown>;
  const opaque = opaqueData(signature);
  const extra = extraContentOf(extraContent);
  return { ...(opaque && { signature: opaque }), ...(extra && { extraContent: extra }) };
}

export function reasoningExtension(signature: OpaqueProviderData | undefined): ReasoningExtension {
  return signature === undefined ? {} : { encrypted_content: pack(signature) };
}

export function reasoningSignatureOf(encrypted: string | null | undefined): OpaqueProviderData | undefined {
  return encrypted ? opaqueData(unpack(encrypted)) : undefined;
}
