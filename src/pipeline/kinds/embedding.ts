/**
 * Embeddings as a kind of output. A request is priced per input token at the route's
 * `input_per_1m`: held for the request's token bound (token ids counted exactly, text bounded by its
 * bytes) and charged for the tokens the upstream reports, or, where it reports none, for the local
 * tokenizer's count (docs/embeddings.md, "Metering"). Validation is the embeddings policy with
 * the route protocol's forms (src/policy/embeddings.ts).
 */
import type { CanonicalEmbeddingRequest, CanonicalEmbeddingResult, Usage } from '../../canonical/index.ts';
import { ZERO_USAGE } from '../../canonical/index.ts';
import type { EndpointPrices } from '../../catalog/types.ts';
import type { Picos } from '../../core/money.ts';
import { checkEmbeddingRoute } from '../../policy/embeddings.ts';
import { EMBEDDINGS, type EmbeddingsProtocol } from '../../protocols/embedding-protocol.ts';
import { EmbeddingSize } from '../../tokens/embedding-size.ts';
import type { OutputKind } from '../kind.ts';

/** What an embeddings call is billed for. */
export interface EmbeddingMeter {
  /** Input tokens: the upstream's count, else the local tokenizer's. */
  readonly inputTokens: number;
}

export interface EmbeddingTypes {
  readonly request: CanonicalEmbeddingRequest;
  readonly result: CanonicalEmbeddingResult;
  readonly meter: EmbeddingMeter;
  readonly estimate: EmbeddingSize;
  readonly protocol: EmbeddingsProtocol;
}

export const EMBEDDING: OutputKind<EmbeddingTypes> = {
  name: 'embedding',
  category: 'EMBEDDING',
  capability: EMBEDDINGS,
  unservable: 'embeddings',
  requestBytes: false,
  estimate: (request) => new EmbeddingSize(request.inputs),
  check: (request, endpoint, protocol, size) => checkEmbeddingRoute(request, endpoint, protocol, size),
  quote: (_request, endpoint, size) => embeddingCost(endpoint.prices, size.bound),
  // The protocols have checked the vectors (src/protocols/embedding-protocol.ts, checkedResult).
  meter: (request, result) => ({ inputTokens: result.inputTokens ?? new EmbeddingSize(request.inputs).tokens }),
  cost: (prices, meter) => embeddingCost(prices, meter.inputTokens),
  logged: (meter) => ({ usage: usageOf(meter), searchUnits: 0 }),
  tokens: (_request, size) => size,
};

function embeddingCost(prices: EndpointPrices, inputTokens: number): Picos {
  return BigInt(inputTokens) * (prices.standard.input ?? 0n) + (prices.perRequest ?? 0n);
}

function usageOf(meter: EmbeddingMeter): Usage {
  return { ...ZERO_USAGE, inputTokens: meter.inputTokens };
}
