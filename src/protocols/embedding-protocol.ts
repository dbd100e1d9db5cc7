/**
 * The `embeddings` capability: vectors for a batch of inputs. A provider kind that serves
 * embeddings implements this interface; the embeddings kind (src/pipeline/kinds/embedding.ts)
 * calls it. Each protocol also says which of the request's forms its wire format can express, so
 * that policy refuses the others before any credit moves (src/policy/embeddings.ts).
 */
import type { CanonicalEmbeddingRequest, CanonicalEmbeddingResult } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import { errors } from '../core/errors.ts';
import type { EmbeddingForms } from '../policy/embeddings.ts';
import { defineCapability } from './capability.ts';
import type { CallContext } from './protocol.ts';

export interface EmbeddingsProtocol extends EmbeddingForms {
  /** One vector per input, in the inputs' order, with the input tokens the upstream reported. */
  complete(request: CanonicalEmbeddingRequest, endpoint: RouteEndpoint, context: CallContext): Promise<CanonicalEmbeddingResult>;
}

export const EMBEDDINGS = defineCapability<EmbeddingsProtocol>('embeddings');

/**
 * An upstream's answer, checked for what the client needs of it: one vector per input, all of one
 * size, the `dimensions` asked for if any. Otherwise it is a malformed answer, which is retryable:
 * the next route is tried, and nothing is charged for this one.
 */
export function checkedResult(request: CanonicalEmbeddingRequest, result: CanonicalEmbeddingResult): CanonicalEmbeddingResult {
  if (result.vectors.length !== request.inputs.length) {
    throw errors.malformedUpstream(`an embeddings answer with ${result.vectors.length} vectors for ${request.inputs.length} inputs`);
  }
  const size = request.dimensions ?? result.vectors[0].length;
  if (result.vectors.some((vector) => vector.length !== size)) {
    throw errors.malformedUpstream(`an embeddings answer whose vectors are not all of ${size} dimensions`);
  }
  return result;
}
