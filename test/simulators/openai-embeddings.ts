/**
 * An OpenAI embeddings upstream (also the shape of vLLM's and Ollama's `/v1/embeddings`):
 * `POST /v1/embeddings` with a bearer key, answering one vector per input with `usage`, with the
 * harness's fault injection. It checks the body as OpenAI does (one of the four input forms, no
 * empty input, `dimensions` only on models that can shorten), answers `encoding_format: base64` as
 * little-endian float32, and can list its vectors out of order (they are placed by `index`) or
 * omit `usage` like some compatible servers, or drop a vector or ignore `dimensions` like a broken one.
 * @see https://platform.openai.com/docs/api-reference/embeddings
 */
import { float32Bytes } from '../../src/dialects/embeddings/encode.ts';
import { simulatedVector } from '../../src/protocols/simulated/embeddings.ts';
import { countTextTokens } from '../../src/tokens/tokenizer.ts';
import { chatErrorBody } from './openai-chat.ts';
import { startSimulator, type RecordedRequest, type Reply, type Simulator } from './harness.ts';

export interface OpenAIEmbeddingsSimulatorOptions {
  apiKey?: string;
  /** The size of a vector when `dimensions` is not sent. */
  nativeDimensions?: number;
  /** Upstream models that refuse `dimensions` (as text-embedding-ada-002 does). */
  fixedModels?: readonly string[];
  /** Lists the vectors last input first. */
  reversed?: boolean;
  /** Answers without `usage`. */
  noUsage?: boolean;
  /** Answers one vector fewer than there are inputs (a broken server). */
  dropVector?: boolean;
  /** Answers vectors of the native size whatever `dimensions` says (a server that ignores it). */
  ignoreDimensions?: boolean;
}

export interface OpenAIEmbeddingsSimulator extends Simulator {
  readonly baseUrl: string;
  readonly options: OpenAIEmbeddingsSimulatorOptions;
}

export async function startOpenAIEmbeddingsSimulator(options: OpenAIEmbeddingsSimulatorOptions = {}): Promise<OpenAIEmbeddingsSimulator> {
  const simulator = await startSimulator({
    handle: (request, reply) => handle(request, reply, options),
    errorBody: chatErrorBody,
    streamErrorEvent: (message) => ({ data: chatErrorBody(500, message) }),
  });
  return Object.assign(simulator, { baseUrl: `${simulator.origin}/v1`, options });
}

type Input = { kind: 'text'; text: string } | { kind: 'tokens'; tokens: number[] };

function handle(request: RecordedRequest, reply: Reply, options: OpenAIEmbeddingsSimulatorOptions): void {
  if (request.method !== 'POST' || request.path !== '/v1/embeddings') return reply.json(404, chatErrorBody(404, `Unknown path ${request.path}`));
  if (options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`) {
    return reply.json(401, chatErrorBody(401, 'Incorrect API key provided.'));
  }
  const body = request.body ?? {};
  if (typeof body.model !== 'string') return reply.json(400, chatErrorBody(400, "Missing required parameter: 'model'."));
  const inputs = inputsOf(body.input);
  if (!inputs) return reply.json(400, chatErrorBody(400, "'$.input' is invalid. Please check the API reference."));
  if (body.dimensions !== undefined && options.fixedModels?.includes(body.model)) {
    return reply.json(400, chatErrorBody(400, 'This model does not support specifying dimensions.'));
  }
  const size = (options.ignoreDimensions ? undefined : body.dimensions) ?? options.nativeDimensions ?? 1536;
  const data = inputs.map((input, index) => {
    const vector = simulatedVector(input, size);
    return { object: 'embedding', index, embedding: body.encoding_format === 'base64' ? float32Bytes(vector).toString('base64') : vector };
  });
  if (options.reversed) data.reverse();
  if (options.dropVector) data.pop();
  const tokens = inputs.reduce((sum, input) => sum + (input.kind === 'tokens' ? input.tokens.length : countTextTokens(input.text)), 0);
  reply.json(200, {
    object: 'list',
    data,
    model: body.model,
    ...(options.noUsage ? {} : { usage: { prompt_tokens: tokens, total_tokens: tokens } }),
  });
}

/** The four forms of `input`; undefined for anything else or an empty input. */
function inputsOf(input: unknown): Input[] | undefined {
  if (typeof input === 'string') return input === '' ? undefined : [{ kind: 'text', text: input }];
  if (!Array.isArray(input) || input.length === 0 || input.length > 2048) return undefined;
  if (input.every((item) => Number.isInteger(item))) return [{ kind: 'tokens', tokens: input }];
  if (input.every((item) => typeof item === 'string' && item !== '')) return input.map((text) => ({ kind: 'text', text }));
  if (input.every((item) => Array.isArray(item) && item.length > 0 && item.every(Number.isInteger))) return input.map((tokens) => ({ kind: 'tokens', tokens }));
  return undefined;
}
