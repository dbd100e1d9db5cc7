/**
 * The `embeddings` capability: vectors for a batch of inputs. A provider kind that serves
 * embeddings implements this interface; the embeddings kind (src/pipeline/kinds/embedding.ts)
 * calls it. Each protocol also says which of the request's forms its wire format can express, so
 * that policy refuses the others before any credit moves (src/policy/embeddings.ts).
 */
import type { CanonicalEmbeddingRequest, CanonicalEmbeddingResult } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import type { EmbeddingForms } from '../policy/embeddings.ts';
import { defineCapability } from './capability.ts';
import type { CallContext } from './protocol.ts';

export interface EmbeddingsProtocol extends EmbeddingForms {
  /** One vector per input, in the inputs' order, with the input tokens the upstream reported. */
  complete(request: CanonicalEmbeddingRequest, endpoint: RouteEndpoint, context: CallContext): Promise<CanonicalEmbeddingResult>;
}

export const EMBEDDINGS = defineCapability<EmbeddingsProtocol>('embeddings');
