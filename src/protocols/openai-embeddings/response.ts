/**
 * OpenAI embeddings answers → the canonical result: one vector per input, placed by its `index`
 * (an answer may list them in any order), and the reported prompt tokens when the server counts them.
 */
import type { CanonicalEmbeddingResult } from '../../canonical/index.ts';
import { errors } from '../../core/errors.ts';
import type { EmbeddingsResponseWire } from './wire.ts';

export function parseEmbeddingsResponse(body: unknown, inputs: number, model: string): CanonicalEmbeddingResult {
  const wire = body as EmbeddingsResponseWire | null;
  if (!wire || !Array.isArray(wire.data)) throw errors.malformedUpstream('an embeddings answer without data');
  if (wire.data.length !== inputs) throw errors.malformedUpstream(`an embeddings answer with ${wire.data.length} vectors for ${inputs} inputs`);
  const vectors: number[][] = new Array(inputs);
  for (const datum of wire.data) {
    const index = datum?.index;
    if (!Number.isInteger(index) || index! < 0 || index! >= inputs || vectors[index!] !== undefined) {
      throw errors.malformedUpstream(`an embedding with a missing, repeated or out-of-range index (${JSON.stringify(index)})`);
    }
    vectors[index!] = vectorOf(datum.embedding);
  }
  const reported = wire.usage?.prompt_tokens;
  return {
    vectors,
    providerModel: typeof wire.model === 'string' ? wire.model : model,
    ...(Number.isInteger(reported) && reported! >= 0 ? { inputTokens: reported } : {}),
  };
}

/** A vector as numbers, or as base64 little-endian float32 (a server that answers base64 regardless). */
function vectorOf(embedding: unknown): number[] {
  if (typeof embedding === 'string') {
    const bytes = Buffer.from(embedding, 'base64');
    if (bytes.length === 0 || bytes.length % 4 !== 0) throw errors.malformedUpstream('a base64 embedding that is not float32');
    return Array.from({ length: bytes.length / 4 }, (_, index) => bytes.readFloatLE(index * 4));
  }
  if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((value) => typeof value === 'number' && Number.isFinite(value))) {
    throw errors.malformedUpstream('an embedding that is not an array of numbers');
  }
  return embedding;
}
