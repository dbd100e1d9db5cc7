/**
 * Thought signatures and tool-call ids (docs/chat-completions.md, rule 1).
 *
 * A `thoughtSignature` on a `functionCall` part becomes the canonical tool call's Gemini-family
 * signature; the chat dialect shows it to clients as `extra_content.google.thought_signature`. On
 * the way back, a tool call carrying either form is sent with its signature on the same part,
 * unchanged; signatures of other families are dropped (they mean nothing to Google).
 *
 * The Gemini API often omits `functionCall.id`. The gateway then names the call
 * `call_<position>_<name>` (deterministic, so a replay of the same answer gets the same ids) and
 * leaves such ids out when the call is sent back, so the replayed part is exactly what Gemini sent.
 * @see https://ai.google.dev/gemini-api/docs/thinking
 */
import type { OpaqueProviderData, ToolCallPart } from '../../canonical/index.ts';

export function geminiSignature(value: string | null | undefined): OpaqueProviderData | undefined {
  return value ? { family: 'gemini', value } : undefined;
}

/** The Gemini signature of a replayed tool call, from its canonical signature or its chat `extra_content`. */
export function thoughtSignatureOf(call: ToolCallPart): string | undefined {
  if (call.signature?.family === 'gemini') return call.signature.value;
  const google = call.extraContent?.google;
  const value = typeof google === 'object' && google !== null ? (google as Record<string, unknown>).thought_signature : undefined;
  return typeof value === 'string' ? value : undefined;
}

export function synthesizedCallId(position: number, name: string): string {
  return `call_${position}_${name}`;
}

/** The id to send back on a replayed call and its response: none when the gateway made it up. */
export function upstreamCallId(id: string, name: string): string | undefined {
  const prefix = /^call_\d+_/.exec(id);
  return prefix !== null && id.slice(prefix[0].length) === name ? undefined : id;
}
