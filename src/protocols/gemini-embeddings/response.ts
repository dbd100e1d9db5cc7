/** Gemini embeddings answers → vectors and the reported prompt tokens (when the API reports them). */
import { errors } from '../../core/errors.ts';
import type { BatchEmbedContentsResponseWire, EmbedContentResponseWire, EmbeddingUsageMetadataWire } from './wire.ts';

export interface EmbeddedSlice {
  readonly vectors: number[][];
  /** Undefined when the answer has no usage metadata. */
  readonly promptTokens?: number;
}

export function parseEmbedContent(body: unknown): EmbeddedSlice {
  const wire = body as EmbedContentResponseWire | null;
  return { vectors: [valuesOf(wire?.embedding?.values)], ...tokensOf(wire?.usageMetadata) };
}

export function parseBatchEmbedContents(body: unknown, expected: number): EmbeddedSlice {
  const wire = body as BatchEmbedContentsResponseWire | null;
  if (!wire || !Array.isArray(wire.embeddings)) throw errors.malformedUpstream('a batchEmbedContents answer without embeddings');
  if (wire.embeddings.length !== expected) {
    throw errors.malformedUpstream(`a batchEmbedContents answer with ${wire.embeddings.length} embeddings for ${expected} requests`);
  }
  return { vectors: wire.embeddings.map((embedding) => valuesOf(embedding?.values)), ...tokensOf(wire.usageMetadata) };
}

function valuesOf(values: unknown): number[] {
  if (!Array.isArray(values) || values.length === 0 || !values.every((value) => typeof value === 'number' && Number.isFinite(value))) {
    throw errors.malformedUpstream('an embedding without values');
  }
  return values;
}

function tokensOf(usage: EmbeddingUsageMetadataWire | undefined): { promptTokens?: number } {
  const count = usage?.promptTokenCount;
  return Number.isInteger(count) && count! >= 0 ? { promptTokens: count } : {};
}
