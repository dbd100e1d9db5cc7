/** The canonical embeddings request → Gemini embedContent / batchEmbedContents bodies. */
import type { CanonicalEmbeddingRequest } from '../../canonical/index.ts';
import type { BatchEmbedContentsRequestWire, EmbedContentRequestWire } from './wire.ts';

/**
 * The most requests one batchEmbedContents call takes; a larger request is sent as several calls.
 * @see https://ai.google.dev/api/embeddings#method:-models.batchembedcontents
 */
export const GEMINI_BATCH_LIMIT = 100;

/** One text's request; policy has refused token-id inputs on this wire before any call. */
export function embedContentRequest(text: string, request: CanonicalEmbeddingRequest, resource?: string): EmbedContentRequestWire {
  return {
    ...(resource === undefined ? {} : { model: resource }),
    content: { parts: [{ text }] },
    ...(request.dimensions === undefined ? {} : { outputDimensionality: request.dimensions }),
  };
}

export function batchEmbedContentsBody(texts: readonly string[], request: CanonicalEmbeddingRequest, resource: string): BatchEmbedContentsRequestWire {
  return { requests: texts.map((text) => embedContentRequest(text, request, resource)) };
}

/** The request's texts in slices a batch call takes. */
export function batchesOf(request: CanonicalEmbeddingRequest): string[][] {
  const texts = request.inputs.map((input) => (input.kind === 'text' ? input.text : ''));
  const batches: string[][] = [];
  for (let start = 0; start < texts.length; start += GEMINI_BATCH_LIMIT) batches.push(texts.slice(start, start + GEMINI_BATCH_LIMIT));
  return batches;
}
