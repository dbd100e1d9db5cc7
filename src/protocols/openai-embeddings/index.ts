/**
 * The OpenAI embeddings upstream protocol on the `openai` provider kind: `POST {base_url}/embeddings`
 * with a bearer key. vLLM, Ollama and most OpenAI-compatible servers expose the same route, so an
 * `openai` provider pointed at one of them serves embeddings too. The wire takes token ids and the
 * end-user id; `dimensions` is sent only when asked (policy lets it through only on routes that can
 * shorten).
 */
import { parseChatError } from '../openai-chat/errors.ts';
import { checkedResult, type EmbeddingsProtocol } from '../embedding-protocol.ts';
import { OPENAI_ADDRESS } from '../openai-request-fields.ts';
import { postJson } from '../transport/json-call.ts';
import { embeddingsRequestBody } from './request.ts';
import { parseEmbeddingsResponse } from './response.ts';

export const openAIEmbeddingsProtocol: EmbeddingsProtocol = {
  tokenInputs: true,
  user: true,
  async complete(request, endpoint, context) {
    const base = (endpoint.provider.base_url ?? OPENAI_ADDRESS.defaultBaseUrl).replace(/\/+$/, '');
    const answer = await postJson(`${base}/embeddings`, embeddingsRequestBody(request, endpoint), {
      headers: context.apiKey === undefined ? {} : OPENAI_ADDRESS.credentialHeaders(context.apiKey),
      timeouts: endpoint.timeouts,
      signal: context.signal,
      correlation: context,
      parseError: parseChatError,
    });
    return checkedResult(request, parseEmbeddingsResponse(answer.body, request.inputs.length, endpoint.upstreamModel));
  },
};
