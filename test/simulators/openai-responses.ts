/**
 * An OpenAI Responses upstream: `POST /v1/responses`, a response object or the
 * exact named-event sequence of the streaming format (created, in_progress, per item added → deltas →
 * done, one terminal event with the full output and usage), with the harness's fault injection.
 * Like the real API it rejects Chat-only parameters, so a test sees it if the gateway sends one.
 *
 * It behaves like a reasoning model where translators can go wrong:
 * - Its reasoning items carry `encrypted_content` when `include: ["reasoning.encrypted_content"]`
 *   asks for it (only on `output_item.done`, not on `added`, as the API warns). A reasoning item
 *   sent back must be one it issued, with that content unchanged; and the first function call after
 *   a reasoning item is accepted back only with that reasoning item before it (stricter than the
 *   API, which checks this only when the call's own `fc_` id is sent, but it is how a stateless
 *   client keeps the model's reasoning across a tool loop).
 * - With the `web_search` tool it searches before answering: `web_search_call` items (action
 *   `search` with the query; `sources` when `web_search_call.action.sources` is included), then a
 *   message whose text carries a `url_citation`, streamed with the web search progress events and
 *   `response.output_text.annotation.added`.
 * @see https://platform.openai.com/docs/api-reference/responses
 */
import { startSimulator, type RecordedRequest, type Reply, type Simulator, type SseEvent } from './harness.ts';
import { type OverDelivery, planReply, promptTokens, REASONING_TEXT, tokenize, type ReplyInput, type ReplyPlan } from './reply.ts';
import { chatErrorBody } from './openai-chat.ts';

export interface OpenAIResponsesSimulatorOptions {
  /** Give and report more than asked (reply.ts, OverDelivery). */
  overDelivery?: OverDelivery;
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (401 otherwise). */
  apiKey?: string;
  /** Reported as `input_tokens_details.cached_tokens` (a subset of input_tokens). */
  cachedTokens?: number;
  /** Return a reasoning summary whenever reasoning was requested (as if `summary` had been asked for). */
  reasoningSummary?: boolean;
  /** Send `data: [DONE]` after the terminal event, as some proxies do. */
  doneSentinel?: boolean;
  /** How many web search calls an answer with the web_search tool makes (default 1). */
  searchQueries?: number;
}

export interface OpenAIResponsesSimulator extends Simulator {
  /** The provider `base_url`: the origin plus `/v1`. */
  readonly baseUrl: string;
  readonly options: OpenAIResponsesSimulatorOptions;
  /** Every reasoning item this server returned, by id, exactly as it returned it. */
  readonly reasoningItems: ReadonlyMap<string, ReasoningItem>;
}

export interface ReasoningItem {
  readonly id: string;
  readonly type: 'reasoning';
  readonly summary: readonly { readonly type: 'summary_text'; readonly text: string }[];
  readonly encrypted_content?: string;
}

/** Where every simulated search result points. */
export const SEARCH_RESULT = { url: 'https://example.com/sim-result', title: 'Simulated result' };

/** Parameters of the Chat format that the Responses API answers with 400. */
const CHAT_ONLY = [
  'messages',
  'stop',
  'seed',
  'presence_penalty',
  'frequency_penalty',
  'logprobs',
  'max_tokens',
  'max_completion_tokens',
  'response_format',
  'reasoning_effort',
  'stream_options',
  'n',
];

const CREATED = 1_700_000_000;

interface State {
  counter: number;
  readonly reasoningItems: Map<string, ReasoningItem>;
  /** call_id of the first function call after a reasoning item → that call's item id and the reasoning item it needs. */
  readonly requiredReasoning: Map<string, { readonly callItemId: string; readonly reasoningId: string }>;
}

export async function startOpenAIResponsesSimulator(options: OpenAIResponsesSimulatorOptions = {}): Promise<OpenAIResponsesSimulator> {
  const state: State = { counter: 0, reasoningItems: new Map(), requiredReasoning: new Map() };
  const simulator = await startSimulator({
    handle: (request, reply) => handle(request, reply, options, state),
    errorBody: responsesErrorBody,
    streamErrorEvent: (message, written) => ({
      event: 'error',
      data: { type: 'error', code: 'server_error', message, param: null, sequence_number: written },
    }),
  });
  return Object.assign(simulator, { baseUrl: `${simulator.origin}/v1`, options, reasoningItems: state.reasoningItems });
}

/** Responses errors use the same envelope as Chat Completions. */
export const responsesErrorBody = chatErrorBody;

async function handle(request: RecordedRequest, reply: Reply, options: OpenAIResponsesSimulatorOptions, state: State): Promise<void> {
  if (request.method !== 'POST' || request.path !== '/v1/responses') {
    return reply.json(404, responsesErrorBody(404, `Unknown path ${request.path}`));
  }
  if (options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`) {
    return reply.json(401, responsesErrorBody(401, 'Incorrect API key provided.'));
  }
  const body = request.body;
  const rejected = CHAT_ONLY.find((name) => body?.[name] !== undefined);
  if (rejected !== undefined) {
    return reply.json(400, {
      error: { message: `Unsupported parameter: '${rejected}'.`, type: 'invalid_request_error', param: rejected, code: 'unsupported_parameter' },
    });
  }
  if (typeof body?.model !== 'string' || body.input === undefined) {
    return reply.json(400, responsesErrorBody(400, "Missing required parameter: 'input'."));
  }
  const items = inputItems(body);
  const problem = invalidReplay(items, state);
  if (problem !== undefined) return reply.json(problem.status, responsesErrorBody(problem.status, problem.message));
  const counter = ++state.counter;
  const input = replyInput(body, items);
  const plan = planReply(input, `call_${counter}`, options.overDelivery);
  const include: unknown[] = Array.isArray(body.include) ? body.include : [];
  const built = buildOutput(plan, counter, {
    reasoning: input.reasoning,
    summary: input.reasoning && (options.reasoningSummary === true || body.reasoning?.summary !== undefined),
    encrypted: include.includes('reasoning.encrypted_content'),
    searches: searchQueries(body, plan, input.lastUserText, options),
    sources: include.includes('web_search_call.action.sources'),
  });
  remember(built.items, state);
  const usage = responsesUsage(body, plan, options);
  const final = responseObject(body, `resp_sim${counter}`, plan.truncated ? 'incomplete' : 'completed', built.items, usage);
  if (body.stream === true) return reply.sse(streamEvents(final, built, options));
  reply.json(200, final);
}

function inputItems(body: any): any[] {
  return typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : body.input;
}

/** The replay checks a translator could fail (see the header); undefined when the input is acceptable. */
function invalidReplay(items: readonly any[], state: State): { status: number; message: string } | undefined {
  for (const [position, item] of items.entries()) {
    if (item?.type === 'reasoning') {
      const issued = state.reasoningItems.get(item.id);
      if (issued === undefined) return { status: 404, message: `Item with id '${item.id}' not found.` };
      if (item.encrypted_content !== undefined && item.encrypted_content !== issued.encrypted_content) {
        return { status: 400, message: `The encrypted content for item ${item.id} could not be verified.` };
      }
    }
    const required = item?.type === 'function_call' ? state.requiredReasoning.get(item.call_id) : undefined;
    if (required !== undefined && !items.slice(0, position).some((earlier) => earlier?.type === 'reasoning' && earlier.id === required.reasoningId)) {
      return {
        status: 400,
        message: `Item '${required.callItemId}' of type 'function_call' was provided without its required 'reasoning' item: '${required.reasoningId}'.`,
      };
    }
  }
  return undefined;
}

function remember(items: readonly any[], state: State): void {
  let reasoningId: string | undefined;
  for (const item of items) {
    if (item.type === 'reasoning') {
      state.reasoningItems.set(item.id, item);
      reasoningId = item.id;
    } else if (item.type === 'function_call' && reasoningId !== undefined) {
      state.requiredReasoning.set(item.call_id, { callItemId: item.id, reasoningId });
      reasoningId = undefined;
    }
  }
}

/** A search per configured query when the web_search tool is on and the answer is text. */
function searchQueries(body: any, plan: ReplyPlan, query: string, options: OpenAIResponsesSimulatorOptions): string[] {
  const searching = (body.tools ?? []).some((tool: any) => tool.type === 'web_search') && plan.toolCalls.length === 0;
  if (!searching) return [];
  return Array.from({ length: options.searchQueries ?? 1 }, (_, position) => (position === 0 ? query : `${query} ${position + 1}`));
}

interface OutputShape {
  readonly reasoning: boolean;
  readonly summary: boolean;
  readonly encrypted: boolean;
  readonly searches: readonly string[];
  readonly sources: boolean;
}

interface BuiltOutput {
  /** Completed items, as in the final response. */
  readonly items: any[];
  /** How each item streams: its text deltas (message/summary) or argument fragments. */
  readonly deltas: readonly (readonly string[])[];
}

function buildOutput(plan: ReplyPlan, counter: number, shape: OutputShape): BuiltOutput {
  const items: any[] = [];
  const deltas: string[][] = [];
  if (shape.reasoning) {
    items.push({
      id: `rs_sim${counter}`,
      type: 'reasoning',
      summary: shape.summary ? [{ type: 'summary_text', text: REASONING_TEXT }] : [],
      ...(shape.encrypted && { encrypted_content: `gAAAAAB${Buffer.from(`sim-reasoning-${counter}`).toString('base64')}` }),
    });
    deltas.push(shape.summary ? tokenize(REASONING_TEXT) : []);
  }
  shape.searches.forEach((query, index) => {
    const action = { type: 'search', query, ...(shape.sources && { sources: [{ type: 'url', url: SEARCH_RESULT.url }] }) };
    items.push({ id: `ws_sim${counter}_${index}`, type: 'web_search_call', status: 'completed', action });
    deltas.push([]);
  });
  if (plan.toolCalls.length === 0) {
    const text = plan.textChunks.join('');
    const cited = shape.searches.length > 0 && text !== '';
    items.push({
      id: `msg_sim${counter}`,
      type: 'message',
      status: plan.truncated ? 'incomplete' : 'completed',
      role: 'assistant',
      content: [
        {
          type: 'output_text',
          text,
          annotations: cited ? [{ type: 'url_citation', start_index: 0, end_index: text.length, url: SEARCH_RESULT.url, title: SEARCH_RESULT.title }] : [],
          logprobs: [],
        },
      ],
    });
    deltas.push([...plan.textChunks]);
  }
  plan.toolCalls.forEach((call, index) => {
    items.push({ id: `fc_sim${counter}_${index}`, type: 'function_call', status: 'completed', call_id: call.id, name: call.name, arguments: call.arguments });
    const middle = Math.ceil(call.arguments.length / 2);
    deltas.push([call.arguments.slice(0, middle), call.arguments.slice(middle)].filter((fragment) => fragment !== ''));
  });
  return { items, deltas };
}

function responseObject(body: any, id: string, status: string, output: any[], usage: object | null) {
  return {
    id,
    object: 'response',
    created_at: CREATED,
    status,
    background: false,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: body.model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage,
    user: body.user ?? null,
    metadata: {},
  };
}

function streamEvents(final: ReturnType<typeof responseObject>, built: BuiltOutput, options: OpenAIResponsesSimulatorOptions): SseEvent[] {
  const events: SseEvent[] = [];
  const emit = (type: string, fields: object) => events.push({ event: type, data: { type, sequence_number: events.length, ...fields } });
  const pending = { ...final, status: 'in_progress', output: [], usage: null, incomplete_details: null };
  emit('response.created', { response: pending });
  emit('response.in_progress', { response: pending });
  built.items.forEach((item, outputIndex) => {
    const pieces = built.deltas[outputIndex];
    const base = { item_id: item.id, output_index: outputIndex };
    switch (item.type) {
      case 'reasoning':
        emit('response.output_item.added', { output_index: outputIndex, item: { id: item.id, type: 'reasoning', summary: [] } });
        if (item.summary.length > 0) {
          const part = { type: 'summary_text', text: '' };
          emit('response.reasoning_summary_part.added', { ...base, summary_index: 0, part });
          for (const delta of pieces) emit('response.reasoning_summary_text.delta', { ...base, summary_index: 0, delta });
          emit('response.reasoning_summary_text.done', { ...base, summary_index: 0, text: item.summary[0].text });
          emit('response.reasoning_summary_part.done', { ...base, summary_index: 0, part: item.summary[0] });
        }
        break;
      case 'web_search_call':
        // The query is known only once the call is done.
        emit('response.output_item.added', {
          output_index: outputIndex,
          item: { id: item.id, type: 'web_search_call', status: 'in_progress', action: { type: 'search' } },
        });
        emit('response.web_search_call.in_progress', base);
        emit('response.web_search_call.searching', base);
        emit('response.web_search_call.completed', base);
        break;
      case 'message': {
        emit('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } });
        const content = item.content[0];
        emit('response.content_part.added', { ...base, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
        for (const delta of pieces) emit('response.output_text.delta', { ...base, content_index: 0, delta, logprobs: [] });
        content.annotations.forEach((annotation: object, annotationIndex: number) => {
          emit('response.output_text.annotation.added', { ...base, content_index: 0, annotation_index: annotationIndex, annotation });
        });
        emit('response.output_text.done', { ...base, content_index: 0, text: content.text, logprobs: [] });
        emit('response.content_part.done', { ...base, content_index: 0, part: content });
        break;
      }
      case 'function_call':
        emit('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } });
        for (const delta of pieces) emit('response.function_call_arguments.delta', { ...base, delta });
        emit('response.function_call_arguments.done', { ...base, name: item.name, arguments: item.arguments });
        break;
    }
    emit('response.output_item.done', { output_index: outputIndex, item });
  });
  emit(final.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: final });
  if (options.doneSentinel) events.push({ data: '[DONE]' });
  return events;
}

function responsesUsage(body: any, plan: ReplyPlan, options: OpenAIResponsesSimulatorOptions) {
  const input = promptTokens([JSON.stringify(body.input), body.instructions ?? '', JSON.stringify(body.tools ?? [])]);
  const cached = Math.min(options.cachedTokens ?? 0, input);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cached, cache_write_tokens: 0 },
    output_tokens: plan.outputTokens,
    output_tokens_details: { reasoning_tokens: plan.reasoningTokens },
    total_tokens: input + plan.outputTokens,
  };
}

function replyInput(body: any, items: readonly any[]): ReplyInput {
  const tail: any[] = [];
  for (let i = items.length - 1; i >= 0 && items[i].type === 'function_call_output'; i--) tail.unshift(items[i]);
  const lastUser = [...items].reverse().find((item) => (item.type ?? 'message') === 'message' && item.role === 'user');
  const format = body.text?.format;
  const choice = body.tool_choice;
  return {
    lastUserText: textOf(lastUser?.content),
    toolResults: tail.map((item) => textOf(item.output)),
    tools: (body.tools ?? [])
      .filter((tool: any) => tool.type === 'function')
      .map((tool: any) => ({ name: tool.name, parameters: tool.parameters ?? undefined })),
    toolChoice: typeof choice === 'object' && choice !== null ? { name: choice.name } : (choice ?? 'auto'),
    parallelToolCalls: body.parallel_tool_calls !== false,
    format:
      format?.type === 'json_schema'
        ? { kind: 'json_schema', schema: format.schema ?? {} }
        : format?.type === 'json_object'
          ? { kind: 'json_object' }
          : { kind: 'text' },
    maxOutputTokens: body.max_output_tokens,
    reasoning: typeof body.reasoning?.effort === 'string' && body.reasoning.effort !== 'none',
  };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.flatMap((part: any) => (part?.type === 'input_text' || part?.type === 'output_text' ? [part.text] : [])).join(' ');
}
