/**
 * The Gemini API's embeddings wire format: `models/{model}:embedContent` for one text and
 * `models/{model}:batchEmbedContents` for several (https://ai.google.dev/api/embeddings).
 */

export interface EmbedContentRequestWire {
  /** `models/{model}`; required in each request of a batch, and the model of the URL. */
  model?: string;
  content: { parts: { text: string }[] };
  outputDimensionality?: number;
}

export interface BatchEmbedContentsRequestWire {
  requests: EmbedContentRequestWire[];
}

interface ContentEmbeddingWire {
  values?: number[];
}

/** Reported by current models; older API surfaces omit it. */
export interface EmbeddingUsageMetadataWire {
  promptTokenCount?: number;
}

export interface EmbedContentResponseWire {
  embedding?: ContentEmbeddingWire;
  usageMetadata?: EmbeddingUsageMetadataWire;
}

export interface BatchEmbedContentsResponseWire {
  embeddings?: ContentEmbeddingWire[];
  usageMetadata?: EmbeddingUsageMetadataWire;
}
