/**
 * Provider data a Messages client must send back unchanged but that the Messages format has no
 * field for (docs/messages.md, "Opaque provider data"): another family's reasoning signature
 * (Gemini thought signatures, OpenAI encrypted reasoning) and the signature or `extra_content` a
 * tool call carries (Gemini requires a function call's thought signature back in the next turn).
 *
 * - A thinking block's `signature` is an Anthropic signature as is; another family's travels as
 *   {@link FOREIGN_SIGNATURE} + base64url(JSON of the family and value).
 * - A tool call's data travels in a `redacted_thinking` block right before its `tool_use`, whose
 *   `data` is {@link TOOL_CALL_DATA} + base64url(JSON of the call id, signature, extra_content).
 *   Clients replay an assistant turn's content as they received it, which is all this needs.
 *
 * Both prefixes are outside the alphabet of Anthropic's own signatures and data (base64), so
 * nothing Anthropic issued is mistaken for them.
 */
import type { OpaqueProviderData, ToolCallPart } from '../../canonical/index.ts';
import { extraContentOf, opaqueData, pack, unpack } from '../packed-data.ts';

const FOREIGN_SIGNATURE = 'gateway.signature:';
const TOOL_CALL_DATA = 'gateway.tool_call:';

export function signatureText(signature: OpaqueProviderData | undefined): string {
  if (signature === undefined) return '';
  return signature.family === 'anthropic' ? signature.value : FOREIGN_SIGNATURE + pack(signature);
}

/** The signature a thinking block's `signature` (or a redacted block's `data`) stands for; none when empty. */
export function signatureOf(text: string): OpaqueProviderData | undefined {
  if (text === '') return undefined;
  if (!text.startsWith(FOREIGN_SIGNATURE)) return { family: 'anthropic', value: text };
  return opaqueData(unpack(text.slice(FOREIGN_SIGNATURE.length)));
}

/** What a tool call carries beyond id, name and input; an Anthropic signature is shown as thinking blocks instead. */
export interface ToolCallData {
  readonly id: string;
  readonly signature?: OpaqueProviderData;
  readonly extraContent?: Readonly<Record<string, unknown>>;
}

/** The `redacted_thinking` data that carries a tool call's data; undefined when it has none to carry. */
export function toolCallDataText(call: Pick<ToolCallPart, 'id' | 'signature' | 'extraContent'>): string | undefined {
  const signature = call.signature?.family === 'anthropic' ? undefined : call.signature;
  if (signature === undefined && call.extraContent === undefined) return undefined;
  const data: ToolCallData = { id: call.id, ...(signature && { signature }), ...(call.extraContent && { extraContent: call.extraContent }) };
  return TOOL_CALL_DATA + pack(data);
}

/**
 * The tool call data a `redacted_thinking` block carries; undefined for Anthropic's own redacted
 * thinking. Data that does not read back (altered by the client) carries nothing: the provider
 * then refuses the turn as it would without it.
 */
export function toolCallDataOf(text: string): ToolCallData | null | undefined {
  if (!text.startsWith(TOOL_CALL_DATA)) return undefined;
  const data = unpack(text.slice(TOOL_CALL_DATA.length));
  if (typeof data !== 'object' || data === null || typeof (data as ToolCallData).id !== 'string') return null;
  const { id, signature, extraContent } = data as Record<string, unknown>;
  const opaque = opaqueData(signature);
  const extra = extraContentOf(extraContent);
  return { id: id as string, ...(opaque && { signature: opaque }), ...(extra && { extraContent: extra }) };
}
