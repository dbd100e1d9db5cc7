/**
 * A Gemini API embeddings upstream: `POST /v1beta/models/{model}:embedContent` (one content) and
 * `:batchEmbedContents` (at most 100 requests, each naming `models/{model}` as the URL does), with
 * `x-goog-api-key`, Google's error body and the harness's fault injection. Answers carry
 * `usageMetadata.promptTokenCount` unless `noUsage` is set (older API surfaces omit it).
 * @see https://ai.google.dev/api/embeddings
 */
import { simulatedVector } from '../../src/protocols/simulated/embeddings.ts';
import { countTextTokens } from '../../src/tokens/tokenizer.ts';
import { googleErrorBody } from './imagen.ts';
import { startSimulator, type RecordedRequest, type Reply, type Simulator } from './harness.ts';

export interface GeminiEmbeddingsSimulatorOptions {
  readonly apiKey: string;
  /** The size of a vector when `outputDimensionality` is not sent. */
  readonly nativeDimensions?: number;
  readonly noUsage?: boolean;
}

export interface GeminiEmbeddingsSimulator extends Simulator {
  /** The provider `base_url` (the API origin, without a version). */
  readonly baseUrl: string;
}

export async function startGeminiEmbeddingsSimulator(options: GeminiEmbeddingsSimulatorOptions): Promise<GeminiEmbeddingsSimulator> {
  const simulator = await startSimulator({
    handle: (request, reply) => handle(request, reply, options),
    errorBody: googleErrorBody,
    streamErrorEvent: (message) => ({ data: googleErrorBody(500, message) }),
  });
  return Object.assign(simulator, { baseUrl: simulator.origin });
}

function handle(request: RecordedRequest, reply: Reply, options: GeminiEmbeddingsSimulatorOptions): void {
  const match = /^\/v1beta\/models\/([^/:]+):(embedContent|batchEmbedContents)$/.exec(request.path);
  if (request.method !== 'POST' || !match) return reply.json(404, googleErrorBody(404, `Unknown path ${request.path}`));
  if (request.headers['x-goog-api-key'] !== options.apiKey) return reply.json(403, googleErrorBody(403, 'API key not valid.'));
  const [, model, method] = match;
  const requests = method === 'embedContent' ? [request.body] : request.body?.requests;
  if (!Array.isArray(requests) || requests.length === 0) return reply.json(400, googleErrorBody(400, '* BatchEmbedContentsRequest.requests: is required'));
  if (requests.length > 100) return reply.json(400, googleErrorBody(400, '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch'));
  const texts: string[] = [];
  for (const [index, item] of requests.entries()) {
    if (method === 'batchEmbedContents' && item?.model !== `models/${model}`) {
      return reply.json(400, googleErrorBody(400, `* BatchEmbedContentsRequest.requests[${index}].model: must be models/${model}`));
    }
    const text = item?.content?.parts?.[0]?.text;
    if (typeof text !== 'string' || text === '') return reply.json(400, googleErrorBody(400, `* requests[${index}].content: text is required`));
    texts.push(text);
  }
  const size = requests[0].outputDimensionality ?? options.nativeDimensions ?? 3072;
  const embeddings = texts.map((text) => ({ values: simulatedVector({ kind: 'text', text }, size) }));
  const usage = options.noUsage ? {} : { usageMetadata: { promptTokenCount: texts.reduce((sum, text) => sum + countTextTokens(text), 0) } };
  reply.json(200, method === 'embedContent' ? { embedding: embeddings[0], ...usage } : { embeddings, ...usage });
}
