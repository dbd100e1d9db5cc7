/** Gemini embeddings answers → vectors and the reported prompt tokens (when the API reports them). */
import { errors } from '../../core/errors.ts';
import { checkedBody, wireCheck } from '../wire-schema.ts';
import { BatchEmbedContentsResponseSchema, EmbedContentResponseSchema } from './wire.ts';

const checkEmbedContent = wireCheck(EmbedContentResponseSchema, 'an embedContent answer');
const checkBatch = wireCheck(BatchEmbedContentsResponseSchema, 'a batchEmbedContents answer');

export interface EmbeddedSlice {
  readonly vectors: number[][];
  /** Undefined when the answer has no usage metadata. */
  readonly promptTokens?: number;
}

export function parseEmbedContent(body: unknown): EmbeddedSlice {
  const wire = checkedBody(checkEmbedContent, body);
  return { vectors: [wire.embedding.values], ...tokensOf(wire.usageMetadata?.promptTokenCount) };
}

export function parseBatchEmbedContents(body: unknown, expected: number): EmbeddedSlice {
  const wire = checkedBody(checkBatch, body);
  if (wire.embeddings.length !== expected) {
    throw errors.malformedUpstream(`a batchEmbedContents answer with ${wire.embeddings.length} embeddings for ${expected} requests`);
  }
  return { vectors: wire.embeddings.map((embedding) => embedding.values), ...tokensOf(wire.usageMetadata?.promptTokenCount) };
}

function tokensOf(count: number | null | undefined): { promptTokens?: number } {
  return count == null ? {} : { promptTokens: count };
}
