/** The token logprobs logprobs.json holds and logprobs.sse streams one token per chunk, in canonical form. */
import type { ContentLogprob } from '../../../src/canonical/index.ts';

const HELLO = { token: 'Hello', logprob: -0.00012, bytes: [72, 101, 108, 108, 111] };
const THERE = { token: ' there', logprob: -0.31, bytes: [32, 116, 104, 101, 114, 101] };
const BANG = { token: '!', logprob: 0, bytes: [33] };

export const HELLO_THERE_LOGPROBS: ContentLogprob[] = [
  { ...HELLO, topLogprobs: [HELLO, { token: 'Hi', logprob: -9.25, bytes: [72, 105] }] },
  { ...THERE, topLogprobs: [THERE, { ...BANG, logprob: -1.32 }] },
  { ...BANG, topLogprobs: [BANG, { token: '.', logprob: -17.5, bytes: [46] }] },
];
