/**
 * The OpenAI embeddings wire format (https://platform.openai.com/docs/api-reference/embeddings),
 * also what vLLM, Ollama and most OpenAI-compatible servers expose at `/v1/embeddings`.
 */

export interface EmbeddingsRequestWire {
  model: string;
  /** Texts, or token-id arrays (one per input). */
  input: string[] | number[][];
  dimensions?: number;
  user?: string;
}

export interface EmbeddingsResponseWire {
  object?: 'list';
  data?: { object?: 'embedding'; index?: number; embedding?: number[] | string }[];
  model?: string;
  /** Some compatible servers omit it. */
  usage?: { prompt_tokens?: number; total_tokens?: number };
}
