/**
 * Canonical embeddings: what the embeddings dialect decodes into and every embeddings protocol
 * translates to and from. As for the other kinds, a field that is `undefined` was not sent: an
 * omitted `dimensions` leaves the vector at the model's own size.
 */
import type { ProviderPreferences } from './request.ts';

/** One input to embed: text, or text already tokenized by the client (token ids of the model's encoding). */
export type EmbeddingInput = { readonly kind: 'text'; readonly text: string } | { readonly kind: 'tokens'; readonly tokens: readonly number[] };

/** Parameters of an embeddings request that policy or a protocol can reject by name. */
export type EmbeddingParam = 'input' | 'dimensions' | 'user';

export interface CanonicalEmbeddingRequest {
  /** The model name as the client wrote it (an id or an alias). */
  readonly model: string;
  /** The `models` fallback list, walked during selection. */
  readonly fallbackModels: readonly string[];
  readonly provider?: ProviderPreferences;
  readonly stream: false;
  /** At least one, in the client's order; the answer's `index` is the position here. */
  readonly inputs: readonly EmbeddingInput[];
  /** The size of the vectors asked for (a shortening the route must support). */
  readonly dimensions?: number;
  readonly user?: string;
}

export interface CanonicalEmbeddingResult {
  /** One vector per input, in the inputs' order. */
  readonly vectors: readonly (readonly number[])[];
  readonly providerModel: string;
  /** Input tokens the upstream reported; undefined when it reports none. */
  readonly inputTokens?: number;
}
