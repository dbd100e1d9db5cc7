/**
 * The upstream simulator of the benchmark, run in its own process by bench/run.ts:
 * `node bench/upstream.ts [--port=0] [--delay-ms=0]`. It prints one JSON line `{"port":N}` once
 * listening.
 *
 * It speaks OpenAI chat completions (JSON and SSE), GET /v1/models, Anthropic messages (JSON and
 * SSE) and count_tokens, OpenAI Images generations (one 256x256 PNG) and OpenAI embeddings (16
 * vectors of 256 floats), with fixed answers and fixed usage. Every answer is serialized once at
 * start, so the simulator spends as little CPU as possible per request: what the benchmark measures
 * is the process in front of it.
 *
 * How a stream is paced is chosen by a path prefix, so one simulator serves every workload and a
 * gateway provider picks its pace with its `base_url`:
 *   /v1/…               the whole stream in one write
 *   /first/{ms}/v1/…    the opening events up to the first text at once, the rest {ms} later
 *                       (time to first byte: what a client waits for is the first text)
 *   /hold/{ms}/v1/…     one event every {ms} (many long-lived open streams)
 *   /delay/{ms}/v1/…    the whole answer {ms} after the request (slow background work)
 * Routes are matched on the end of the path, so a base URL with or without `/v1` both work.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { encode } from 'fast-png';
import { listenForBenchmark } from './listen.ts';

/** Content chunks of every streamed answer. */
export const STREAM_CHUNKS = 20;
/** Fixed usage reported by every answer. */
export const PROMPT_TOKENS = 250;
export const COMPLETION_TOKENS = STREAM_CHUNKS;

const CREATED = 1_700_000_000;
const UPSTREAM_MODEL = 'bench-upstream';
const words = Array.from({ length: STREAM_CHUNKS }, (_, index) => `word${index} `);
const fullText = words.join('');

type Pace =
  | { readonly kind: 'burst' }
  | { readonly kind: 'first'; readonly ms: number }
  | { readonly kind: 'hold'; readonly ms: number }
  | { readonly kind: 'delay'; readonly ms: number };

const sse = (data: unknown, event?: string): Buffer => Buffer.from(`${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`);

function openAIUsage() {
  return { prompt_tokens: PROMPT_TOKENS, completion_tokens: COMPLETION_TOKENS, total_tokens: PROMPT_TOKENS + COMPLETION_TOKENS };
}

const chatCompletion = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: CREATED,
    model: UPSTREAM_MODEL,
    choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: fullText, refusal: null } }],
    usage: openAIUsage(),
    system_fingerprint: 'fp_bench',
  }),
);

/** One 256x256 PNG with a gradient (about as compressible as a simple picture), as OpenAI answers GPT image models. */
const imageGeneration = (() => {
  const side = 256;
  const data = new Uint8Array(side * side * 3);
  for (let index = 0; index < side * side; index++) data.set([index % side, Math.floor(index / side), (index * 7) % 256], index * 3);
  const png = Buffer.from(encode({ width: side, height: side, data, channels: 3, depth: 8 }));
  return Buffer.from(
    JSON.stringify({
      created: CREATED,
      data: [{ b64_json: png.toString('base64') }],
      usage: { input_tokens: 14, input_tokens_details: { text_tokens: 14, image_tokens: 0 }, output_tokens: 272, total_tokens: 286 },
    }),
  );
})();

/** The inputs of the embeddings workload, and the size of each vector. */
export const EMBEDDING_INPUTS = 16;
const EMBEDDING_DIMENSIONS = 256;
/** Tokens of the embeddings workload's 16 inputs, as the upstream reports them. */
export const EMBEDDING_PROMPT_TOKENS = 16 * 12;

/**
 * 16 vectors of 256 floats, written as an upstream writes float32 values (about nine significant
 * digits), with the inputs' token count.
 * @see https://platform.openai.com/docs/api-reference/embeddings/object
 */
const embeddingsAnswer = Buffer.from(
  JSON.stringify({
    object: 'list',
    data: Array.from({ length: EMBEDDING_INPUTS }, (_, index) => ({
      object: 'embedding',
      index,
      embedding: Array.from({ length: EMBEDDING_DIMENSIONS }, (_, at) => Number((Math.sin(index * 31 + at) / 16).toPrecision(9))),
    })),
    model: UPSTREAM_MODEL,
    usage: { prompt_tokens: EMBEDDING_PROMPT_TOKENS, total_tokens: EMBEDDING_PROMPT_TOKENS },
  }),
);

function chatChunk(delta: object, finishReason: string | null) {
  return {
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: CREATED,
    model: UPSTREAM_MODEL,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    usage: null,
  };
}

/**
 * A Chat Completions stream: a role chunk, the content chunks, the finish chunk, the usage chunk if
 * asked, [DONE].
 * @see https://platform.openai.com/docs/api-reference/chat-streaming
 */
function chatStream(includeUsage: boolean): Buffer[] {
  return [
    sse(chatChunk({ role: 'assistant', content: '' }, null)),
    ...words.map((word) => sse(chatChunk({ content: word }, null))),
    sse(chatChunk({}, 'stop')),
    ...(includeUsage
      ? [sse({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: CREATED, model: UPSTREAM_MODEL, choices: [], usage: openAIUsage() })]
      : []),
    Buffer.from('data: [DONE]\n\n'),
  ];
}
/** A stream's events, and how many of them open it up to and including the first text. */
interface StreamEvents {
  readonly events: readonly Buffer[];
  readonly opening: number;
}

const chatStreamWithUsage: StreamEvents = { events: chatStream(true), opening: 2 };
const chatStreamWithoutUsage: StreamEvents = { events: chatStream(false), opening: 2 };

const modelList = Buffer.from(
  JSON.stringify({
    object: 'list',
    data: Array.from({ length: 8 }, (_, index) => ({ id: `bench-upstream-${index}`, object: 'model', created: CREATED, owned_by: 'bench' })),
  }),
);

const anthropicUsage = { input_tokens: PROMPT_TOKENS, output_tokens: COMPLETION_TOKENS, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

const anthropicMessage = Buffer.from(
  JSON.stringify({
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model: UPSTREAM_MODEL,
    content: [{ type: 'text', text: fullText }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: anthropicUsage,
  }),
);

/**
 * A Messages stream: message_start, one text block of deltas, message_delta with cumulative usage,
 * message_stop.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/streaming
 */
const anthropicEvents: Buffer[] = [
  sse(
    {
      type: 'message_start',
      message: {
        id: 'msg_bench',
        type: 'message',
        role: 'assistant',
        model: UPSTREAM_MODEL,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...anthropicUsage, output_tokens: 1 },
      },
    },
    'message_start',
  ),
  sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
  ...words.map((word) => sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: word } }, 'content_block_delta')),
  sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
  sse({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: COMPLETION_TOKENS } }, 'message_delta'),
  sse({ type: 'message_stop' }, 'message_stop'),
];
const anthropicStream: StreamEvents = { events: anthropicEvents, opening: 3 };

const countTokens = Buffer.from(JSON.stringify({ input_tokens: PROMPT_TOKENS }));
const notFound = Buffer.from(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error', param: null, code: null } }));
const badRequest = Buffer.from(JSON.stringify({ error: { message: 'the body is not JSON', type: 'invalid_request_error', param: null, code: null } }));

const PACED_PREFIX = /^\/(first|hold|delay)\/(\d+)(?=\/)/;

function paceOf(path: string): { pace: Pace; rest: string } {
  const match = PACED_PREFIX.exec(path);
  if (match === null) return { pace: { kind: 'burst' }, rest: path };
  const ms = Number(match[2]);
  const pace: Pace = { kind: match[1] as 'first' | 'hold' | 'delay', ms };
  return { pace, rest: path.slice(match[0].length) };
}

function sendJson(response: ServerResponse, status: number, body: Buffer): void {
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  response.end(body);
}

function sendStream(response: ServerResponse, stream: StreamEvents, pace: Pace): void {
  const { events, opening } = stream;
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  switch (pace.kind) {
    case 'burst':
    case 'delay':
      response.end(Buffer.concat(events));
      return;
    case 'first': {
      response.write(Buffer.concat(events.slice(0, opening)));
      const timer = setTimeout(() => response.end(Buffer.concat(events.slice(opening))), pace.ms);
      response.once('close', () => clearTimeout(timer));
      return;
    }
    case 'hold': {
      let next = 0;
      const writeNext = () => {
        if (next === events.length - 1) response.end(events[next]);
        else response.write(events[next]);
        next += 1;
      };
      writeNext();
      const timer = setInterval(() => {
        writeNext();
        if (next === events.length) clearInterval(timer);
      }, pace.ms);
      response.once('close', () => clearInterval(timer));
      return;
    }
    default: {
      const unreachable: never = pace;
      throw new Error(`unknown pace ${JSON.stringify(unreachable)}`);
    }
  }
}

function readBody(request: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('error', reject);
    request.on('end', () => {
      if (chunks.length === 0) return resolve(undefined);
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        resolve(null);
      }
    });
  });
}

interface ChatBody {
  readonly stream?: unknown;
  readonly stream_options?: { readonly include_usage?: unknown } | null;
}

function answer(path: string, pace: Pace, body: unknown, response: ServerResponse): void {
  if (path.endsWith('/models')) return sendJson(response, 200, modelList);
  if (body === null || typeof body !== 'object') return sendJson(response, 400, badRequest);
  const request = body as ChatBody;
  if (path.endsWith('/chat/completions')) {
    if (request.stream !== true) return sendJson(response, 200, chatCompletion);
    const stream = request.stream_options?.include_usage === true ? chatStreamWithUsage : chatStreamWithoutUsage;
    return sendStream(response, stream, pace);
  }
  if (path.endsWith('/images/generations')) return sendJson(response, 200, imageGeneration);
  if (path.endsWith('/embeddings')) return sendJson(response, 200, embeddingsAnswer);
  if (path.endsWith('/messages/count_tokens')) return sendJson(response, 200, countTokens);
  if (path.endsWith('/messages')) {
    if (request.stream !== true) return sendJson(response, 200, anthropicMessage);
    return sendStream(response, anthropicStream, pace);
  }
  sendJson(response, 404, notFound);
}

export function startUpstream(options: { readonly port: number; readonly delayMs: number }): Promise<number> {
  const server = createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    const { pace, rest } = paceOf(query === -1 ? url : url.slice(0, query));
    readBody(request).then(
      (body) => {
        if (rest.endsWith('/models') ? request.method !== 'GET' : request.method !== 'POST') return sendJson(response, 404, notFound);
        const delayMs = options.delayMs + (pace.kind === 'delay' ? pace.ms : 0);
        if (delayMs > 0) setTimeout(() => answer(rest, pace, body, response), delayMs);
        else answer(rest, pace, body, response);
      },
      () => response.destroy(),
    );
  });
  return listenForBenchmark(server, options.port);
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, 'delay-ms': { type: 'string', default: '0' } } });
  const port = await startUpstream({ port: Number(values.port), delayMs: Number(values['delay-ms']) });
  process.stdout.write(`${JSON.stringify({ port })}\n`);
}
