/**
 * The embeddings answer in the OpenAI shape
 * (https://platform.openai.com/docs/api-reference/embeddings/object): `object: "list"`, one
 * `{object: "embedding", index, embedding}` per input in the inputs' order, the public model id,
 * and `usage` with the input tokens billed. A `base64` embedding is the vector as little-endian
 * float32, the form the openai SDK asks for and decodes.
 */
import type { CanonicalEmbeddingResult } from '../../canonical/index.ts';
import type { EmbeddingMeter } from '../../pipeline/kinds/embedding.ts';

export interface EmbeddingsAnswerBody {
  readonly object: 'list';
  readonly data: readonly EmbeddingDatum[];
  readonly model: string;
  readonly usage: { readonly prompt_tokens: number; readonly total_tokens: number };
}

interface EmbeddingDatum {
  readonly object: 'embedding';
  readonly index: number;
  readonly embedding: readonly number[] | string;
}

/** `float32`: each vector as float32Bytes gives it, read for `base64` (the caller also stores them). */
export function encodeEmbeddings(
  result: CanonicalEmbeddingResult,
  modelId: string,
  meter: EmbeddingMeter,
  encoding: 'float' | 'base64',
  float32: readonly Buffer[],
): EmbeddingsAnswerBody {
  return {
    object: 'list',
    data: result.vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: encoding === 'base64' ? float32[index].toString('base64') : vector,
    })),
    model: modelId,
    usage: { prompt_tokens: meter.inputTokens, total_tokens: meter.inputTokens },
  };
}

/** The vector as little-endian float32 bytes, whatever the platform's byte order. */
export function float32Bytes(vector: readonly number[]): Buffer {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  vector.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
  return bytes;
}
