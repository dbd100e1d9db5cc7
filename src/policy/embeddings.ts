/**
 * Whether one route can serve an embeddings request as asked (docs/embeddings.md, "Rules"): the
 * route's limits and shortening range (catalog data), and what its protocol's wire can express.
 * Every rejection is a 400 naming the client's field, before any credit moves.
 */
import type { CanonicalEmbeddingRequest } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import type { EmbeddingSize } from '../tokens/embedding-size.ts';
import { embeddingFieldRef, notSupported, type PolicyViolation } from './violation.ts';

/** What an embeddings protocol's wire can express, beyond text inputs (each protocol declares it). */
export interface EmbeddingForms {
  /** Whether inputs may be token ids (the OpenAI wire); otherwise only text is sent. */
  readonly tokenInputs: boolean;
  /** Whether the wire carries the end-user id (`user`). */
  readonly user: boolean;
}

export function checkEmbeddingRoute(
  request: CanonicalEmbeddingRequest,
  endpoint: RouteEndpoint,
  protocol: EmbeddingForms,
  size: EmbeddingSize,
): PolicyViolation | undefined {
  return checkInputs(request, endpoint, protocol, size) ?? checkDimensions(request, endpoint) ?? checkUser(request, protocol);
}

function checkInputs(request: CanonicalEmbeddingRequest, endpoint: RouteEndpoint, protocol: EmbeddingForms, size: EmbeddingSize): PolicyViolation | undefined {
  const { max_batch_inputs: maxInputs, max_input_tokens: maxTokens } = endpoint.limits;
  if (maxInputs !== undefined && request.inputs.length > maxInputs) {
    return {
      ref: embeddingFieldRef('input'),
      code: 'invalid_value',
      message: (param) => `'${param}' has ${request.inputs.length} inputs; this model takes at most ${maxInputs} in one request.`,
    };
  }
  if (!protocol.tokenInputs) {
    const index = request.inputs.findIndex((input) => input.kind === 'tokens');
    if (index >= 0) return notSupported(embeddingFieldRef('input', index), 'is token ids, which this model does not take: send the text instead');
  }
  if (maxTokens !== undefined && size.exceeds(maxTokens)) {
    return {
      ref: embeddingFieldRef('input'),
      code: 'invalid_value',
      message: (param) => `'${param}' has ${size.tokens} tokens; this model takes at most ${maxTokens} in one request.`,
    };
  }
  return undefined;
}

function checkDimensions(request: CanonicalEmbeddingRequest, endpoint: RouteEndpoint): PolicyViolation | undefined {
  const asked = request.dimensions;
  if (asked === undefined) return undefined;
  const range = endpoint.capabilities.dimensions;
  if (!range) return notSupported(embeddingFieldRef('dimensions'), 'is not supported by this model: its vectors cannot be shortened');
  if (asked < range.minimum || asked > range.maximum) {
    return {
      ref: embeddingFieldRef('dimensions'),
      code: 'invalid_value',
      message: (param) => `'${param}' must be between ${range.minimum} and ${range.maximum} on this model; got ${asked}.`,
    };
  }
  return undefined;
}

function checkUser(request: CanonicalEmbeddingRequest, protocol: EmbeddingForms): PolicyViolation | undefined {
  return request.user !== undefined && !protocol.user ? notSupported(embeddingFieldRef('user')) : undefined;
}
