/**
 * Gemini embeddings on the `gemini` provider kind: one text is `POST
 * {base_url}/v1beta/models/{model}:embedContent`, several are `:batchEmbedContents`, in calls of at
 * most 100 sent one after another, with `x-goog-api-key`. The wire takes text only and no end-user
 * id (policy refuses token ids and `user` before any credit moves); `dimensions` is
 * `outputDimensionality`. The reported tokens are the sum of every call's `usageMetadata`; when
 * any call reports none, the request has no reported count (the local tokenizer's is billed).
 */
import type { CanonicalEmbeddingRequest } from '../../canonical/index.ts';
import type { RouteEndpoint } from '../../catalog/types.ts';
import { checkedResult, type EmbeddingsProtocol } from '../embedding-protocol.ts';
import { parseGeminiError } from '../gemini/errors.ts';
import type { CallContext } from '../protocol.ts';
import { postJson, type JsonCallOptions } from '../transport/json-call.ts';
import { batchEmbedContentsBody, batchesOf, embedContentRequest } from './request.ts';
import { parseBatchEmbedContents, parseEmbedContent, type EmbeddedSlice } from './response.ts';

const DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';

export const geminiEmbeddingsProtocol: EmbeddingsProtocol = {
  tokenInputs: false,
  user: false,
  async complete(request, endpoint, context) {
    const slices: EmbeddedSlice[] = [];
    for (const texts of batchesOf(request)) slices.push(await embedSlice(texts, request, endpoint, context));
    const counts = slices.map((slice) => slice.promptTokens);
    return checkedResult(request, {
      vectors: slices.flatMap((slice) => slice.vectors),
      providerModel: endpoint.upstreamModel,
      ...(counts.every((count) => count !== undefined) ? { inputTokens: counts.reduce((sum, count) => sum + count!, 0) } : {}),
    });
  },
};

async function embedSlice(texts: readonly string[], request: CanonicalEmbeddingRequest, endpoint: RouteEndpoint, context: CallContext): Promise<EmbeddedSlice> {
  const base = (endpoint.provider.base_url ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  // Model names are written either bare or as the API's resource name (`models/…`).
  const model = endpoint.upstreamModel.replace(/^models\//, '');
  const url = `${base}/v1beta/models/${encodeURIComponent(model)}`;
  const options: JsonCallOptions = {
    headers: context.apiKey === undefined ? {} : { 'x-goog-api-key': context.apiKey },
    timeouts: endpoint.timeouts,
    signal: context.signal,
    correlation: context,
    parseError: parseGeminiError,
  };
  if (texts.length === 1) return parseEmbedContent((await postJson(`${url}:embedContent`, embedContentRequest(texts[0], request), options)).body);
  const answer = await postJson(`${url}:batchEmbedContents`, batchEmbedContentsBody(texts, request, `models/${model}`), options);
  return parseBatchEmbedContents(answer.body, texts.length);
}
