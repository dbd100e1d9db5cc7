/**
 * An Anthropic Messages upstream: `POST /v1/messages` with `x-api-key` and
 * `anthropic-version`, answering a Message or the exact event sequence of the streaming format
 * (message_start, per block content_block_start → ping after the first → deltas →
 * content_block_stop, message_delta, message_stop), with the harness's fault injection.
 *
 * Like the real API it checks what a translator can get wrong: max_tokens is required, a thinking
 * budget must lie in 1024..max_tokens−1, every tool_use must be answered by a tool_result in the
 * very next user turn, a replayed thinking block must carry a signature this server issued, and with
 * thinking on, the last assistant turn of a tool loop must start with its thinking block.
 * It thinks when thinking is requested and reports cache writes (split by lifetime), then reads,
 * for prefixes marked with cache_control. With the web search server tool it searches as the API
 * documents: each search a `server_tool_use` block answered by a `web_search_tool_result`, a search
 * past the tool's `max_uses` answered with the `max_uses_exceeded` error (and not billed), the
 * answer citing the first result, and `usage.server_tool_use.web_search_requests` counting the searches that ran.
 * @see https://docs.anthropic.com/en/api/messages
 */
import { startSimulator, type RecordedRequest, type Reply, type Simulator, type SseEvent } from './harness.ts';
import { type OverDelivery, planReply, REASONING_TEXT, tokenize, type ReplyInput, type ReplyPlan } from './reply.ts';

export interface AnthropicSimulatorOptions {
  /** Give and report more than asked (reply.ts, OverDelivery). */
  overDelivery?: OverDelivery;
  /** When set, requests must carry `x-api-key: <apiKey>` (401 otherwise). */
  apiKey?: string;
  /** How many searches the model tries when the web search tool is present (default 1). */
  searchQueries?: number;
  /**
   * Reports this many of the uncached input tokens as cache reads instead, whatever the request's
   * breakpoints (a prefix another request wrote, in effect); the prompt's total is unchanged.
   */
  cachedTokens?: number;
  /** Reports this stop reason (and matched stop sequence) instead of the one the reply plan implies. */
  stop?: { readonly reason: string; readonly sequence: string | null };
}

export interface AnthropicSimulator extends Simulator {
  /** The provider `base_url`: the origin (the protocol appends `/v1/messages`). */
  readonly baseUrl: string;
  readonly options: AnthropicSimulatorOptions;
}

interface State {
  counter: number;
  /** Signatures of the thinking blocks this server produced. */
  readonly signatures: Set<string>;
  /** Cache prefixes written so far (a later identical prefix is a cache read). */
  readonly cached: Set<string>;
}

export async function startAnthropicSimulator(options: AnthropicSimulatorOptions = {}): Promise<AnthropicSimulator> {
  const state: State = { counter: 0, signatures: new Set(), cached: new Set() };
  const simulator = await startSimulator({
    handle: (request, reply) => handle(request, reply, options, state),
    errorBody: anthropicErrorBody,
    streamErrorEvent: (message) => ({ event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message } } }),
  });
  return Object.assign(simulator, { baseUrl: simulator.origin, options });
}

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

export function anthropicErrorBody(status: number, message: string): object {
  return { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message }, request_id: 'req_sim' };
}

async function handle(request: RecordedRequest, reply: Reply, options: AnthropicSimulatorOptions, state: State): Promise<void> {
  if (request.method !== 'POST' || request.path !== '/v1/messages') return reply.json(404, anthropicErrorBody(404, `Not found: ${request.path}`));
  if (options.apiKey !== undefined && request.headers['x-api-key'] !== options.apiKey) return reply.json(401, anthropicErrorBody(401, 'invalid x-api-key'));
  if (request.headers['anthropic-version'] === undefined) return reply.json(400, anthropicErrorBody(400, 'anthropic-version: header is required'));
  const body = request.body;
  const problem = invalidRequest(body, state);
  if (problem !== undefined) return reply.json(400, anthropicErrorBody(400, problem));
  const counter = ++state.counter;
  const input = replyInput(body);
  const plan = planReply(input, `toolu_sim${counter}`, options.overDelivery);
  const signature = input.reasoning ? `sig-sim-${counter}` : undefined;
  if (signature !== undefined) state.signatures.add(signature);
  const usage = messageUsage(body, plan, state, options.cachedTokens ?? 0);
  const stopReason = options.stop?.reason ?? (plan.toolCalls.length > 0 ? 'tool_use' : plan.truncated ? 'max_tokens' : 'end_turn');
  const stopSequence = options.stop?.sequence ?? null;
  const id = `msg_sim${counter}`;
  const search = planSearch(body, input.lastUserText, options.searchQueries ?? 1, counter);
  const text = plan.textChunks.join('');
  const citation = search?.cited && {
    type: 'web_search_result_location',
    ...search.cited,
    encrypted_index: Buffer.from(`sim-index-${counter}`).toString('base64'),
    cited_text: text.slice(0, 150),
  };
  const searchUsage = search && { server_tool_use: { web_search_requests: search.requests, web_fetch_requests: 0 } };
  if (body.stream === true) return reply.sse(streamEvents(id, body.model, plan, signature, stopReason, stopSequence, usage, search, citation, searchUsage));
  reply.json(200, {
    id,
    type: 'message',
    role: 'assistant',
    model: body.model,
    content: [
      ...(signature !== undefined ? [{ type: 'thinking', thinking: REASONING_TEXT, signature }] : []),
      ...(search?.calls ?? []).flatMap((call) => [
        { type: 'server_tool_use', id: call.id, name: 'web_search', input: { query: call.query } },
        { type: 'web_search_tool_result', tool_use_id: call.id, content: call.content },
      ]),
      ...(text !== '' ? [{ type: 'text', text, citations: citation ? [citation] : null }] : []),
      ...plan.toolCalls.map((call) => ({ type: 'tool_use', id: call.id, name: call.name, input: JSON.parse(call.arguments) })),
    ],
    stop_reason: stopReason,
    stop_sequence: stopSequence,
    usage: { ...usage, ...searchUsage },
  });
}

interface SearchPlan {
  readonly calls: readonly { readonly id: string; readonly query: string; readonly content: object }[];
  /** Searches that ran: what the API bills. */
  readonly requests: number;
  /** The result the answer cites, when a search ran. */
  readonly cited?: { readonly url: string; readonly title: string };
}

/** Undefined without the web search tool. Queries come from the user's words, one result each. */
function planSearch(body: any, query: string, attempts: number, counter: number): SearchPlan | undefined {
  const tool = (body.tools ?? []).find((candidate: any) => candidate.type === WEB_SEARCH_TOOL);
  if (tool === undefined) return undefined;
  const allowed = tool.max_uses ?? Infinity;
  const calls = Array.from({ length: Math.min(attempts, allowed + 1) }, (_, position) => {
    const id = `srvtoolu_sim${counter}_${position}`;
    const text = position === 0 ? query : `${query} ${position + 1}`;
    const content =
      position < allowed
        ? [
            {
              type: 'web_search_result',
              url: `https://example.com/${counter}/${position + 1}`,
              title: `Result ${position + 1}`,
              encrypted_content: Buffer.from(`sim-content-${counter}-${position}`).toString('base64'),
              page_age: 'April 30, 2025',
            },
          ]
        : { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' };
    return { id, query: text, content };
  });
  const requests = Math.min(attempts, allowed);
  return { calls, requests, ...(requests > 0 && { cited: { url: `https://example.com/${counter}/1`, title: 'Result 1' } }) };
}

const WEB_SEARCH_TOOL = 'web_search_20250305';

/** The checks of the real API that a translator could fail; undefined when the body is acceptable. */
function invalidRequest(body: any, state: State): string | undefined {
  if (typeof body?.model !== 'string') return 'model: Field required';
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: at least one message is required';
  const thinking = body.thinking;
  if (thinking?.type === 'enabled' && !(thinking.budget_tokens >= 1024 && thinking.budget_tokens < body.max_tokens)) {
    return 'thinking.budget_tokens: must be ≥ 1024 and less than max_tokens';
  }
  for (const [position, tool] of (Array.isArray(body.tools) ? body.tools : []).entries()) {
    // Function tools have no type (or `custom`); every other type names a server tool version.
    if (tool.type === undefined || tool.type === 'custom') continue;
    if (tool.type !== WEB_SEARCH_TOOL) return `tools.${position}: Input tag '${tool.type}' found using 'type' does not match any of the expected tags`;
    if (tool.name !== 'web_search') return `tools.${position}.${WEB_SEARCH_TOOL}.name: Input should be 'web_search'`;
    if (tool.max_uses !== undefined && !(Number.isInteger(tool.max_uses) && tool.max_uses >= 1)) {
      return `tools.${position}.${WEB_SEARCH_TOOL}.max_uses: Input should be greater than or equal to 1`;
    }
  }
  const messages: any[] = body.messages;
  const lastAssistant = messages.findLastIndex((message) => message.role === 'assistant');
  const closing: any[] = lastAssistant < 0 || !Array.isArray(messages[lastAssistant].content) ? [] : messages[lastAssistant].content;
  const thinkingOn = thinking?.type === 'enabled' || thinking?.type === 'adaptive';
  if (thinkingOn && closing.some((block) => block.type === 'tool_use') && !['thinking', 'redacted_thinking'].includes(closing[0]?.type)) {
    return `messages.${lastAssistant}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${closing[0]?.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`;
  }
  for (const [position, message] of messages.entries()) {
    const blocks: any[] = Array.isArray(message.content) ? message.content : [];
    for (const block of blocks) {
      if (block.type === 'thinking' && !state.signatures.has(block.signature))
        return `messages.${position}.content: Invalid \`signature\` in \`thinking\` block`;
      if (block.type === 'tool_use' && (typeof block.input !== 'object' || block.input === null || Array.isArray(block.input))) {
        return `messages.${position}.content: tool_use.input: Input should be a valid dictionary`;
      }
    }
    const calls = blocks.filter((block) => block.type === 'tool_use').map((block) => block.id);
    if (message.role !== 'assistant' || calls.length === 0) continue;
    const next = messages[position + 1];
    const answered = new Set(
      (Array.isArray(next?.content) ? next.content : []).filter((block: any) => block.type === 'tool_result').map((block: any) => block.tool_use_id),
    );
    const missing = calls.filter((id) => !answered.has(id));
    if (next !== undefined && (next.role !== 'user' || missing.length > 0)) {
      return `messages.${position + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}`;
    }
  }
  return undefined;
}

function streamEvents(
  id: string,
  model: string,
  plan: ReplyPlan,
  signature: string | undefined,
  stopReason: string,
  stopSequence: string | null,
  usage: any,
  search: SearchPlan | undefined,
  citation: object | undefined,
  searchUsage: object | undefined,
): SseEvent[] {
  const event = (data: { type: string; [field: string]: unknown }): SseEvent => ({ event: data.type, data });
  const events: SseEvent[] = [
    event({
      type: 'message_start',
      message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
    }),
  ];
  let index = 0;
  const block = (start: object, deltas: readonly object[]) => {
    events.push(event({ type: 'content_block_start', index, content_block: start }));
    if (index === 0) events.push(event({ type: 'ping' }));
    for (const delta of deltas) events.push(event({ type: 'content_block_delta', index, delta }));
    events.push(event({ type: 'content_block_stop', index }));
    index++;
  };
  if (signature !== undefined) {
    block({ type: 'thinking', thinking: '', signature: '' }, [
      ...tokenize(REASONING_TEXT).map((thinking) => ({ type: 'thinking_delta', thinking })),
      { type: 'signature_delta', signature },
    ]);
  }
  for (const call of search?.calls ?? []) {
    // The query streams like tool arguments; the results arrive whole with the block's start.
    const input = JSON.stringify({ query: call.query });
    block(
      { type: 'server_tool_use', id: call.id, name: 'web_search', input: {} },
      halves(input).map((partial_json) => ({ type: 'input_json_delta', partial_json })),
    );
    block({ type: 'web_search_tool_result', tool_use_id: call.id, content: call.content }, []);
  }
  if (plan.textChunks.length > 0) {
    block({ type: 'text', text: '' }, [
      ...(citation ? [{ type: 'citations_delta', citation }] : []),
      ...plan.textChunks.map((text) => ({ type: 'text_delta', text })),
    ]);
  }
  for (const call of plan.toolCalls) {
    // Arguments arrive as an empty first fragment and then in pieces, as from the real API.
    block(
      { type: 'tool_use', id: call.id, name: call.name, input: {} },
      ['', ...halves(call.arguments)].map((partial_json) => ({ type: 'input_json_delta', partial_json })),
    );
  }
  const finalUsage = { output_tokens: usage.output_tokens, output_tokens_details: usage.output_tokens_details, ...searchUsage };
  events.push(event({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: stopSequence }, usage: finalUsage }));
  events.push(event({ type: 'message_stop' }));
  return events;
}

/**
 * Input tokens split as the API does: every cache_control breakpoint writes the prefix up to it; a
 * later request whose prefix (up to its last breakpoint) starts with a written one reads that part
 * from the cache and writes only the rest; `input_tokens` is what follows the last breakpoint.
 * `cache_creation` splits the writes by lifetime: the API wants 1-hour breakpoints before 5-minute
 * ones, so what was written up to the last 1-hour breakpoint is 1-hour, the rest 5-minute.
 */
function messageUsage(body: any, plan: ReplyPlan, state: State, extraCached: number) {
  const pieces: any[] = [...(body.tools ?? []), ...(Array.isArray(body.system) ? body.system : [body.system ?? ''])];
  for (const message of body.messages) pieces.push(...(Array.isArray(message.content) ? message.content : [message.content]));
  // Breakpoints move between turns; the cached content is what counts, not where the marks sit.
  const plain = pieces.map((piece) => (typeof piece === 'object' && piece !== null ? { ...piece, cache_control: undefined } : piece));
  const prefixKey = (end: number) => JSON.stringify(plain.slice(0, end + 1));
  const tokens = (text: string) => Math.ceil(text.length / 4);
  const last = pieces.findLastIndex((piece) => piece?.cache_control !== undefined);
  let read = -1;
  for (let end = last; end >= 0 && read < 0; end--) if (state.cached.has(prefixKey(end))) read = end;
  pieces.forEach((piece, end) => {
    if (piece?.cache_control !== undefined) state.cached.add(prefixKey(end));
  });
  const readTokens = read < 0 ? 0 : tokens(prefixKey(read));
  const writtenUpTo = (end: number) => (end < 0 ? 0 : Math.max(0, tokens(prefixKey(end)) - readTokens));
  const written = writtenUpTo(last);
  const writtenFor1h = writtenUpTo(pieces.findLastIndex((piece) => piece?.cache_control?.ttl === '1h'));
  const uncached = Math.max(1, tokens(JSON.stringify(plain.slice(last + 1))));
  const moved = Math.min(extraCached, uncached - 1);
  return {
    input_tokens: uncached - moved,
    cache_creation_input_tokens: written,
    cache_creation: { ephemeral_5m_input_tokens: written - writtenFor1h, ephemeral_1h_input_tokens: writtenFor1h },
    cache_read_input_tokens: readTokens + moved,
    output_tokens: plan.outputTokens,
    output_tokens_details: { thinking_tokens: plan.reasoningTokens },
    service_tier: 'standard',
  };
}

function replyInput(body: any): ReplyInput {
  const messages: any[] = body.messages;
  const lastUser = messages.findLast((message) => message.role === 'user');
  const blocks: any[] = typeof lastUser?.content === 'string' ? [{ type: 'text', text: lastUser.content }] : (lastUser?.content ?? []);
  const choice = body.tool_choice;
  const format = body.output_config?.format;
  return {
    lastUserText: blocks
      .filter((block) => block.type === 'text')
      .map((block) => block.text)
      .join(' '),
    toolResults: blocks.filter((block) => block.type === 'tool_result').map((block) => textOf(block.content)),
    tools: (body.tools ?? [])
      .filter((tool: any) => tool.type === undefined || tool.type === 'custom')
      .map((tool: any) => ({ name: tool.name, parameters: tool.input_schema })),
    toolChoice: choice?.type === 'tool' ? { name: choice.name } : choice?.type === 'any' ? 'required' : choice?.type === 'none' ? 'none' : 'auto',
    parallelToolCalls: choice?.disable_parallel_tool_use !== true,
    format: format?.type === 'json_schema' ? { kind: 'json_schema', schema: format.schema ?? {} } : { kind: 'text' },
    maxOutputTokens: body.max_tokens,
    reasoning: body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive',
  };
}

function halves(text: string): string[] {
  const middle = Math.ceil(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)];
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.flatMap((block: any) => (block?.type === 'text' ? [block.text] : [])).join(' ');
}
