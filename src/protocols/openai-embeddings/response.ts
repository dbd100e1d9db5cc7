/**
 * OpenAI embeddings answers → the canonical result: one vector per input, placed by its `index`
 * (an answer may list them in any order), and the reported prompt tokens when the server counts them.
 */
import type { CanonicalEmbeddingResult } from '../../canonical/index.ts';
import { errors } from '../../core/errors.ts';
import { checkedBody, wireCheck } from '../wire-schema.ts';
import { EmbeddingsResponseSchema } from './wire.ts';

const checkEmbeddings = wireCheck(EmbeddingsResponseSchema, 'an embeddings answer');

export function parseEmbeddingsResponse(body: unknown, inputs: number, model: string): CanonicalEmbeddingResult {
  const wire = checkedBody(checkEmbeddings, body);
  if (wire.data.length !== inputs) throw errors.malformedUpstream(`an embeddings answer with ${wire.data.length} vectors for ${inputs} inputs`);
  const vectors: number[][] = new Array(inputs);
  for (const datum of wire.data) {
    const { index } = datum;
    if (index >= inputs || vectors[index] !== undefined) throw errors.malformedUpstream(`an embedding with a repeated or out-of-range index (${index})`);
    vectors[index] = vectorOf(datum.embedding);
  }
  const reported = wire.usage?.prompt_tokens;
  return { vectors, providerModel: wire.model ?? model, ...(reported == null ? {} : { inputTokens: reported }) };
}

/** A vector as numbers, or as base64 little-endian float32 (a server that answers base64 regardless). */
function vectorOf(embedding: number[] | string): number[] {
  if (typeof embedding !== 'string') return embedding;
  const bytes = Buffer.from(embedding, 'base64');
  if (bytes.length === 0 || bytes.length % 4 !== 0) throw errors.malformedUpstream('a base64 embedding that is not float32');
  const vector = Array.from({ length: bytes.length / 4 }, (_, index) => bytes.readFloatLE(index * 4));
  if (!vector.every(Number.isFinite)) throw errors.malformedUpstream('a base64 embedding that is not finite');
  return vector;
}
