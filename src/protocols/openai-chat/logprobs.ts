/**
 * A choice's `logprobs` → canonical token logprobs.
 * @see https://platform.openai.com/docs/api-reference/chat
 */
import type { ContentLogprob } from '../../canonical/index.ts';
import type { ChatLogprobsWire } from './wire.ts';

/**
 * The tokens of the text the choice produced: the refusal's when there is no content, as the text
 * itself is read. Undefined when the provider sent none (logprobs not asked for, or not supported).
 */
export function chatLogprobs(wire: ChatLogprobsWire | null | undefined): ContentLogprob[] | undefined {
  const tokens = wire?.content ?? wire?.refusal;
  if (tokens === null || tokens === undefined) return undefined;
  return tokens.map((entry) => ({
    token: entry.token,
    logprob: entry.logprob,
    bytes: entry.bytes ?? null,
    topLogprobs: (entry.top_logprobs ?? []).map((top) => ({ token: top.token, logprob: top.logprob, bytes: top.bytes ?? null })),
  }));
}
