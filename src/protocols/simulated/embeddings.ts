/**
 * The simulated provider's embeddings: deterministic unit vectors drawn from the input, with no
 * upstream at all. Each vector is a hashed bag of features (the words of a text and their
 * character trigrams; the ids of a token input), so the same input always gets the same vector,
 * texts that share words point in similar directions without being equal, and a client can check
 * which vector belongs to which input. It takes every form of the request (token ids, `user`,
 * `dimensions`) and reports the local tokenizer's count as its usage.
 */
import type { EmbeddingInput } from '../../canonical/index.ts';
import { EmbeddingSize } from '../../tokens/embedding-size.ts';
import type { EmbeddingsProtocol } from '../embedding-protocol.ts';

/** The size of a vector when neither the request nor the route (`capabilities.dimensions.maximum`) says. */
export const SIMULATED_DEFAULT_DIMENSIONS = 256;

export const simulatedEmbeddingsProtocol: EmbeddingsProtocol = {
  tokenInputs: true,
  user: true,
  async complete(request, endpoint, context) {
    context.signal.throwIfAborted();
    const size = request.dimensions ?? endpoint.capabilities.dimensions?.maximum ?? SIMULATED_DEFAULT_DIMENSIONS;
    return {
      vectors: request.inputs.map((input) => simulatedVector(input, size)),
      providerModel: endpoint.upstreamModel,
      inputTokens: new EmbeddingSize(request.inputs).tokens,
    };
  },
};

/** How many dimensions one feature moves. */
const FEATURE_SPREAD = 4;

/** The unit vector of one input, `size` values. */
export function simulatedVector(input: EmbeddingInput, size: number): number[] {
  const sums = new Float64Array(size);
  const add = (feature: string) => {
    let hash = fnv1a(feature);
    // Each feature moves a few dimensions, so that vectors are dense enough to look like embeddings:
    // each round's low bits choose the dimension, its top bit the sign (xorshift for the next round).
    for (let round = 0; round < FEATURE_SPREAD; round++) {
      sums[(hash & 0x7fffffff) % size] += hash & 0x80000000 ? -1 : 1;
      hash ^= hash << 13;
      hash ^= hash >>> 17;
      hash ^= hash << 5;
      hash >>>= 0;
    }
  };
  if (input.kind === 'tokens') {
    for (const token of input.tokens) add(`#${token}`);
  } else {
    for (const word of input.text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
      if (word === '') continue;
      add(word);
      const padded = ` ${word} `;
      for (let start = 0; start + 3 <= padded.length; start++) add(padded.slice(start, start + 3));
    }
  }
  let squares = 0;
  for (const value of sums) squares += value * value;
  let norm = Math.sqrt(squares);
  // An input with no features (punctuation only) still gets a unit vector: the first axis.
  if (norm === 0) {
    sums[0] = 1;
    norm = 1;
  }
  return Array.from(sums, (value) => value / norm);
}

/** 32-bit FNV-1a over the string's UTF-16 code units: cheap, and stable across processes. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
