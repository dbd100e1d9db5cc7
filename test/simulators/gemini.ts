/**
 * A Gemini API upstream: `POST /v1beta/models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse` with `x-goog-api-key`, answering a GenerateContentResponse or
 * data-only SSE chunks (text in pieces with a running `usageMetadata`, function calls whole, the
 * finish reason, grounding and final usage on the last chunk), with the harness's fault injection.
 *
 * It behaves like a Gemini 3 model where translators can go wrong: function calls come without ids
 * and the first call of a turn carries a `thoughtSignature`; a later request that replays that call
 * without the signature is rejected with 400 INVALID_ARGUMENT "… missing a thought_signature"
 * (docs/chat-completions.md, rule 1). It thinks (with thought summaries when asked), grounds its
 * answer with search metadata when the googleSearch tool is present, and reports implicit cache
 * hits when configured to.
 * @see https://ai.google.dev/api/generate-content
 */
import { startSimulator, type RecordedRequest, type Reply, type Simulator, type SseEvent } from './harness.ts';
import { type OverDelivery, planReply, promptTokens, REASONING_TEXT, type ReplyInput, type ReplyPlan } from './reply.ts';

export interface GeminiSimulatorOptions {
  /** Give and report more than asked (reply.ts, OverDelivery). */
  overDelivery?: OverDelivery;
  /** When set, requests must carry `x-goog-api-key: <apiKey>` (400 API_KEY_INVALID otherwise, as Gemini does). */
  apiKey?: string;
  /** Reported as `cachedContentTokenCount` (implicit caching; a subset of promptTokenCount). */
  cachedTokens?: number;
  /** How many search queries a grounded answer reports having run (default 1). */
  searchQueries?: number;
}

export interface GeminiSimulator extends Simulator {
  /** The provider `base_url`: the origin (the protocol appends `/v1beta/models/…`). */
  readonly baseUrl: string;
  readonly options: GeminiSimulatorOptions;
}

/** What grounded answers report (search results fed back to the model). */
export const SIMULATED_TOOL_USE_PROMPT_TOKENS = 20;

interface State {
  counter: number;
  /** `name(args)` of each function call this server signed → the signature it issued. */
  readonly signatures: Map<string, string>;
}

export async function startGeminiSimulator(options: GeminiSimulatorOptions = {}): Promise<GeminiSimulator> {
  const state: State = { counter: 0, signatures: new Map() };
  const simulator = await startSimulator({
    handle: (request, reply) => handle(request, reply, options, state),
    errorBody: geminiErrorBody,
    streamErrorEvent: (message) => ({ data: geminiErrorBody(503, message) }),
  });
  return Object.assign(simulator, { baseUrl: simulator.origin, options });
}

const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function geminiErrorBody(status: number, message: string): object {
  return { error: { code: status, message, status: STATUS_NAMES[status] ?? 'UNKNOWN' } };
}

const PATH = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent\?alt=sse)$/;

async function handle(request: RecordedRequest, reply: Reply, options: GeminiSimulatorOptions, state: State): Promise<void> {
  const route = PATH.exec(request.path);
  if (request.method !== 'POST' || route === null) return reply.json(404, geminiErrorBody(404, `Not found: ${request.path}`));
  if (options.apiKey !== undefined && request.headers['x-goog-api-key'] !== options.apiKey) {
    return reply.json(400, {
      error: {
        ...(geminiErrorBody(400, 'API key not valid. Please pass a valid API key.') as { error: object }).error,
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }],
      },
    });
  }
  const body = request.body;
  const problem = invalidRequest(body, state);
  if (problem !== undefined) return reply.json(400, geminiErrorBody(400, problem));
  const model = decodeURIComponent(route[1]);
  const counter = ++state.counter;
  const input = replyInput(body);
  const plan = planReply(input, `unused${counter}`, options.overDelivery);
  const thoughts = input.reasoning && body.generationConfig?.thinkingConfig?.includeThoughts === true;
  const grounded = (body.tools ?? []).some((tool: any) => tool.googleSearch !== undefined);
  const calls = plan.toolCalls.map((call, position) => {
    const args = JSON.parse(call.arguments);
    // Only the first call of a turn is signed, as Gemini does for parallel calls.
    const signature = position === 0 ? Buffer.from(`sim-signature-${counter}`).toString('base64') : undefined;
    if (signature !== undefined) state.signatures.set(callKey(call.name, args), signature);
    return { functionCall: { name: call.name, args }, ...(signature !== undefined && { thoughtSignature: signature }) };
  });
  const text = plan.textChunks.join('');
  const finishReason = plan.truncated ? 'MAX_TOKENS' : 'STOP';
  const usage = usageMetadata(body, plan, options, grounded);
  const common = { modelVersion: model, responseId: `sim-${counter}` };
  const grounding = grounded ? groundingMetadata(input.lastUserText, text, options.searchQueries ?? 1) : undefined;
  if (route[2] !== 'generateContent') {
    return reply.sse(streamChunks(plan, thoughts, calls, finishReason, usage, grounding, common));
  }
  const parts = [...(thoughts ? [{ text: REASONING_TEXT, thought: true }] : []), ...(text !== '' ? [{ text }] : []), ...calls];
  reply.json(200, {
    candidates: [{ content: { role: 'model', parts }, finishReason, index: 0, ...(grounding && { groundingMetadata: grounding }) }],
    usageMetadata: usage,
    ...common,
  });
}

/**
 * The checks of the real API that a translator could fail; undefined when acceptable. A model turn
 * whose first function call this server signed must carry that signature back on the same part.
 */
function invalidRequest(body: any, state: State): string | undefined {
  if (!Array.isArray(body?.contents) || body.contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified';
  for (const [position, content] of (body.contents as any[]).entries()) {
    if (content.role !== 'user' && content.role !== 'model') return `Please use a valid role: user, model. (contents[${position}])`;
    const parts: any[] = content.parts ?? [];
    for (const part of parts) {
      if (part.functionResponse !== undefined && (typeof part.functionResponse.name !== 'string' || typeof part.functionResponse.response !== 'object')) {
        return `* GenerateContentRequest.contents[${position}].parts: functionResponse needs a name and a response object`;
      }
    }
    const first = parts.find((part) => part.functionCall !== undefined);
    if (content.role !== 'model' || first === undefined) continue;
    const issued = state.signatures.get(callKey(first.functionCall.name, first.functionCall.args));
    if (issued === undefined) continue;
    if (first.thoughtSignature === undefined) {
      return `Function call \`${first.functionCall.name}\` in the ${position + 1}. content block is missing a \`thought_signature\`. Learn more: https://ai.google.dev/gemini-api/docs/thought-signatures`;
    }
    if (first.thoughtSignature !== issued) return `Corrupted thought signature in the ${position + 1}. content block.`;
  }
  return undefined;
}

function callKey(name: string, args: unknown): string {
  return `${name}(${JSON.stringify(args ?? {})})`;
}

function streamChunks(
  plan: ReplyPlan,
  thoughts: boolean,
  calls: readonly object[],
  finishReason: string,
  usage: ReturnType<typeof usageMetadata>,
  grounding: object | undefined,
  common: object,
): SseEvent[] {
  const chunk = (parts: readonly object[], running: object, last = false): SseEvent => ({
    data: {
      candidates: [
        {
          content: { role: 'model', parts },
          index: 0,
          ...(last && { finishReason }),
          ...(last && grounding && { groundingMetadata: grounding }),
        },
      ],
      usageMetadata: running,
      ...common,
    },
  });
  const running = { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount };
  const pieces: object[][] = [];
  if (thoughts) pieces.push([{ text: REASONING_TEXT, thought: true }]);
  for (const text of plan.textChunks) pieces.push([{ text }]);
  if (calls.length > 0) pieces.push([...calls]);
  if (pieces.length === 0) pieces.push([{ text: '' }]);
  return pieces.map((parts, position) => (position === pieces.length - 1 ? chunk(parts, usage, true) : chunk(parts, running)));
}

function usageMetadata(body: any, plan: ReplyPlan, options: GeminiSimulatorOptions, grounded: boolean) {
  const prompt = promptTokens([JSON.stringify(body.contents), JSON.stringify(body.systemInstruction ?? ''), JSON.stringify(body.tools ?? [])]);
  const cached = Math.min(options.cachedTokens ?? 0, prompt);
  const toolUse = grounded ? SIMULATED_TOOL_USE_PROMPT_TOKENS : 0;
  const candidates = plan.outputTokens - plan.reasoningTokens;
  return {
    promptTokenCount: prompt,
    ...(cached > 0 && { cachedContentTokenCount: cached }),
    candidatesTokenCount: candidates,
    ...(plan.reasoningTokens > 0 && { thoughtsTokenCount: plan.reasoningTokens }),
    ...(toolUse > 0 && { toolUsePromptTokenCount: toolUse }),
    totalTokenCount: prompt + candidates + plan.reasoningTokens + toolUse,
  };
}

/** Queries from the user's words, one source, one support spanning the answer (UTF-8 byte offsets). */
function groundingMetadata(query: string, answer: string, queries: number) {
  return {
    webSearchQueries: Array.from({ length: queries }, (_, position) => (position === 0 ? query : `${query} ${position + 1}`)),
    searchEntryPoint: { renderedContent: `<style>.chip{display:inline-block}</style><div class="chip">${query}</div>` },
    groundingChunks: [{ web: { uri: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/sim', title: 'example.com' } }],
    groundingSupports: answer === '' ? [] : [{ segment: { endIndex: Buffer.byteLength(answer, 'utf8'), text: answer }, groundingChunkIndices: [0] }],
  };
}

function replyInput(body: any): ReplyInput {
  const contents: any[] = body.contents;
  const lastUser = contents.findLast((content) => content.role === 'user');
  const parts: any[] = lastUser?.parts ?? [];
  const calling = body.toolConfig?.functionCallingConfig;
  const allowed: string[] = calling?.allowedFunctionNames ?? [];
  const config = body.generationConfig ?? {};
  const thinking = config.thinkingConfig;
  return {
    lastUserText: parts
      .filter((part) => typeof part.text === 'string')
      .map((part) => part.text)
      .join(' '),
    toolResults: parts
      .filter((part) => part.functionResponse !== undefined)
      .map((part) => {
        const response = part.functionResponse.response;
        return typeof response?.result === 'string' ? response.result : JSON.stringify(response);
      }),
    tools: (body.tools ?? [])
      .flatMap((tool: any) => tool.functionDeclarations ?? [])
      .map((fn: any) => ({ name: fn.name, parameters: fn.parametersJsonSchema })),
    toolChoice:
      calling?.mode === 'NONE'
        ? 'none'
        : calling?.mode === 'ANY' && allowed.length === 1
          ? { name: allowed[0] }
          : calling?.mode === 'ANY'
            ? 'required'
            : 'auto',
    parallelToolCalls: true,
    format:
      config.responseJsonSchema !== undefined
        ? { kind: 'json_schema', schema: config.responseJsonSchema }
        : config.responseMimeType === 'application/json'
          ? { kind: 'json_object' }
          : { kind: 'text' },
    maxOutputTokens: config.maxOutputTokens,
    reasoning: thinking !== undefined && thinking.thinkingBudget !== 0,
  };
}
