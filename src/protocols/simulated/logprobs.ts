/**
 * Deterministic log probabilities for the simulated provider, so that `logprobs` behaves as on a
 * real model: the text's tokens in order (they join back into the text), each with its UTF-8 bytes
 * and, when `top_logprobs` asks, that many likeliest tokens at its position, the chosen one first.
 *
 * Tokens are words with their trailing whitespace (and any leading whitespace on its own), not the
 * tokenizer's: a stream's deltas end on word boundaries, so the logprobs of its deltas joined are
 * exactly the complete result's.
 */
import type { ContentLogprob, TokenLogprob } from '../../canonical/index.ts';

/** Alternatives offered beside the chosen token (one more than `top_logprobs` allows, for skipping it). */
const ALTERNATIVES = [
  ' the',
  ' a',
  ' and',
  ' of',
  ' to',
  ' in',
  ' is',
  ' it',
  ' that',
  ' for',
  ' on',
  ' with',
  ' as',
  ' was',
  ' at',
  ' by',
  ' this',
  ' be',
  ' or',
  ' an',
  ' not',
];

/** `top` is the request's `top_logprobs` (0 when only `logprobs` was asked for). */
export function simulatedLogprobs(text: string, top: number): ContentLogprob[] {
  return (text.match(/^\s+|\S+\s*/g) ?? []).map((token) => {
    const chosen = candidate(token, chosenLogprob(token));
    const others = ALTERNATIVES.filter((alternative) => alternative !== token)
      .slice(0, Math.max(0, top - 1))
      .map((alternative, rank) => candidate(alternative, Math.round((chosen.logprob - rank - 1) * 1000) / 1000));
    return { ...chosen, topLogprobs: top > 0 ? [chosen, ...others] : [] };
  });
}

function candidate(token: string, logprob: number): TokenLogprob {
  return { token, logprob, bytes: [...Buffer.from(token, 'utf8')] };
}

/**
 * In (-1, -0.5], from the token's text. With each alternative one nat less likely than the last,
 * the probabilities listed at a position never add up to more than 1.
 */
function chosenLogprob(token: string): number {
  let hash = 0;
  for (const char of token) hash = (hash * 31 + char.codePointAt(0)!) % 1_000_003;
  return -(500 + (hash % 500)) / 1000;
}
