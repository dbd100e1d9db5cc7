/**
 * The OpenAI embeddings wire format (https://platform.openai.com/docs/api-reference/embeddings),
 * also what vLLM, Ollama and most OpenAI-compatible servers expose at `/v1/embeddings`.
 */
import { Type } from '@sinclair/typebox';
import { Maybe, Partial, TokenCount } from '../wire-schema.ts';

export interface EmbeddingsRequestWire {
  model: string;
  /** Texts, or token-id arrays (one per input). */
  input: string[] | number[][];
  dimensions?: number;
  user?: string;
}

/**
 * The answer, checked against this deliberately partial schema (../wire-schema.ts): each vector
 * (numbers, or base64 little-endian float32 from a server that answers base64 regardless) with its
 * input's index, and the prompt tokens when the server counts them (some compatible servers omit
 * them).
 */
export const EmbeddingsResponseSchema = Partial({
  data: Type.Array(
    Type.Object({
      index: Type.Integer({ minimum: 0 }),
      embedding: Type.Union([Type.Array(Type.Number(), { minItems: 1 }), Type.String({ minLength: 1 })]),
    }),
  ),
  model: Maybe(Type.String()),
  usage: Maybe(Partial({ prompt_tokens: TokenCount })),
});
