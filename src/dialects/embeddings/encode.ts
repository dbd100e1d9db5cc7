/**
 * The embeddings answer in the OpenAI shape
 * (https://platform.openai.com/docs/api-reference/embeddings/object): `object: "list"`, one
 * `{object: "embedding", index, embedding}` per input in the inputs' order, the public model id,
 * and `usage` with the input tokens billed. A `base64` embedding is the vector as little-endian
 * float32, the form the openai SDK asks for and decodes.
 */
import type { CanonicalEmbeddingResult } from '../../canonical/index.ts';
import type { EmbeddingMeter } from '../../pipeline/kinds/embedding.ts';

export interface EmbeddingsBody {
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

export function encodeEmbeddings(result: CanonicalEmbeddingResult, modelId: string, meter: EmbeddingMeter, encoding: 'float' | 'base64'): EmbeddingsBody {
  return {
    object: 'list',
    data: result.vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: encoding === 'base64' ? float32Base64(vector) : vector,
    })),
    model: modelId,
    usage: { prompt_tokens: meter.inputTokens, total_tokens: meter.inputTokens },
  };
}

/** The vector as little-endian float32 bytes, in base64, whatever the platform's byte order. */
export function float32Base64(vector: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  vector.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
  return bytes.toString('base64');
}
