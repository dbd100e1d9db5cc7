/**
 * The Gemini API's embeddings wire format: `models/{model}:embedContent` for one text and
 * `models/{model}:batchEmbedContents` for several (https://ai.google.dev/api/embeddings).
 */
import { Type } from '@sinclair/typebox';
import { Maybe, Partial, TokenCount } from '../wire-schema.ts';

export interface EmbedContentRequestWire {
  /** `models/{model}`; required in each request of a batch, and the model of the URL. */
  model?: string;
  content: { parts: { text: string }[] };
  outputDimensionality?: number;
}

export interface BatchEmbedContentsRequestWire {
  requests: EmbedContentRequestWire[];
}

// ---- answers: checked against these deliberately partial schemas (../wire-schema.ts) ----

const ContentEmbeddingSchema = Type.Object({ values: Type.Array(Type.Number(), { minItems: 1 }) });

/** Reported by current models; older API surfaces omit it. */
const UsageMetadataSchema = Maybe(Partial({ promptTokenCount: TokenCount }));

export const EmbedContentResponseSchema = Partial({ embedding: ContentEmbeddingSchema, usageMetadata: UsageMetadataSchema });

export const BatchEmbedContentsResponseSchema = Partial({ embeddings: Type.Array(ContentEmbeddingSchema), usageMetadata: UsageMetadataSchema });
