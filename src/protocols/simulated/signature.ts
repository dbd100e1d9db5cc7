/**
 * The simulated provider signs its tool calls the way Gemini attaches thought signatures: opaque
 * data under `extra_content` that a client must send back unchanged in the next turn. A replayed
 * call whose signature was altered is refused, as a provider that checks signatures would; a call
 * replayed without one (dialects that cannot carry it) is accepted.
 */
import { createHash } from 'node:crypto';
import type { CanonicalRequest, ToolCallPart } from '../../canonical/index.ts';
import { errors } from '../../core/errors.ts';
import { conversationParam } from '../param-names.ts';

export const SIMULATED_CALL_PREFIX = 'call_sim_';

export function signToolCall(id: string, name: string, args: string): Readonly<Record<string, unknown>> {
  return { simulated: { signature: signature(id, name, args) } };
}

export function verifyReplayedSignatures(request: CanonicalRequest): void {
  for (const message of request.messages) {
    if (message.role !== 'assistant') continue;
    for (const part of message.content) {
      if (part.type !== 'tool_call' || !part.id.startsWith(SIMULATED_CALL_PREFIX)) continue;
      const sent = signatureOf(part);
      if (sent !== undefined && sent !== signature(part.id, part.name, part.arguments)) {
        throw errors.invalidValue(conversationParam(request.dialect), `The tool call '${part.id}' was replayed with a changed signature; send it back unchanged.`);
      }
    }
  }
}

function signatureOf(part: ToolCallPart): unknown {
  const simulated = part.extraContent?.simulated;
  return typeof simulated === 'object' && simulated !== null ? (simulated as { signature?: unknown }).signature : undefined;
}

function signature(id: string, name: string, args: string): string {
  return createHash('sha256').update(`simulated-signature\n${id}\n${name}\n${args}`).digest('base64url').slice(0, 32);
}
