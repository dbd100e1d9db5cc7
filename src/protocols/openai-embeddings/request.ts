/** The canonical embeddings request → the OpenAI embeddings body. */
import type { CanonicalEmbeddingRequest } from '../../canonical/index.ts';
import type { RouteEndpoint } from '../../catalog/types.ts';
import type { EmbeddingsRequestWire } from './wire.ts';

export function embeddingsRequestBody(request: CanonicalEmbeddingRequest, endpoint: RouteEndpoint): EmbeddingsRequestWire {
  // The dialect makes a request all text or all token ids; the wire takes either array.
  const input = request.inputs.every((item) => item.kind === 'text')
    ? request.inputs.map((item) => item.text)
    : request.inputs.map((item) => (item.kind === 'tokens' ? [...item.tokens] : []));
  return {
    model: endpoint.upstreamModel,
    // No `encoding_format`: its default, plain numbers, is what every compatible server speaks.
    input,
    ...(request.dimensions === undefined ? {} : { dimensions: request.dimensions }),
    ...(request.user === undefined ? {} : { user: request.user }),
  };
}
