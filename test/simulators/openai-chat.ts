/**
 * An OpenAI Chat Completions upstream: `POST /v1/chat/completions`, JSON or the
 * exact chunk sequence of the streaming format (role chunk, content or tool-call deltas, a finish
 * chunk, the usage chunk when asked, `[DONE]`), with the harness's fault injection.
 *
 * Like the real API it returns token logprobs when asked (`logprobs`, `top_logprobs`), and answers
 * a request with `web_search_options` as a search model does, with `url_citation` annotations. Like
 * a compatible server that keeps state in its tool calls, it puts opaque data in each call's
 * `extra_content` and refuses a next turn that does not send it back unchanged.
 * @see https://platform.openai.com/docs/api-reference/chat
 */
import { isDeepStrictEqual } from 'node:util';
import { startSimulator, type RecordedRequest, type Reply, type Simulator, type SseEvent } from './harness.ts';
import { type OverDelivery, planReply, promptTokens, REASONING_TEXT, tokenize, type PlannedToolCall, type ReplyInput, type ReplyPlan } from './reply.ts';

export interface OpenAIChatSimulatorOptions {
  /** Give and report more than asked (reply.ts, OverDelivery). */
  overDelivery?: OverDelivery;
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (401 otherwise). */
  apiKey?: string;
  /** Reported as `prompt_tokens_details.cached_tokens` (a subset of prompt_tokens). */
  cachedTokens?: number;
  /** Behave like a compatible server that returns reasoning text as `reasoning_content`. */
  compatReasoning?: boolean;
  /** Accept a next turn whose tool calls lost their `extra_content`, as OpenAI itself keeps no state in them (default: refuse it, as Google's compatible endpoint does). */
  statelessToolCalls?: boolean;
}

export interface OpenAIChatSimulator extends Simulator {
  /** The provider `base_url`: the origin plus `/v1`. */
  readonly baseUrl: string;
  /** Mutable between requests. */
  readonly options: OpenAIChatSimulatorOptions;
}

const CREATED = 1_700_000_000;

export async function startOpenAIChatSimulator(options: OpenAIChatSimulatorOptions = {}): Promise<OpenAIChatSimulator> {
  let counter = 0;
  const simulator = await startSimulator({
    handle: (request, reply) => handle(request, reply, options, ++counter),
    errorBody: chatErrorBody,
    streamErrorEvent: (message) => ({ data: chatErrorBody(500, message) }),
  });
  return Object.assign(simulator, { baseUrl: `${simulator.origin}/v1`, options });
}

export function chatErrorBody(status: number, message: string): object {
  const [type, code] =
    status === 429
      ? ['requests', 'rate_limit_exceeded']
      : status === 401
        ? ['invalid_request_error', 'invalid_api_key']
        : status >= 500
          ? ['server_error', null]
          : ['invalid_request_error', null];
  return { error: { message, type, param: null, code } };
}

async function handle(request: RecordedRequest, reply: Reply, options: OpenAIChatSimulatorOptions, counter: number): Promise<void> {
  if (request.method !== 'POST' || request.path !== '/v1/chat/completions') {
    return reply.json(404, chatErrorBody(404, `Unknown path ${request.path}`));
  }
  if (options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`) {
    return reply.json(401, chatErrorBody(401, 'Incorrect API key provided.'));
  }
  const body = request.body;
  if (typeof body?.model !== 'string' || !Array.isArray(body.messages) || body.messages.length === 0) {
    return reply.json(400, chatErrorBody(400, "Missing required parameter: 'messages'."));
  }
  const unreplayed = options.statelessToolCalls === true ? undefined : unreplayedExtraContent(body.messages);
  if (unreplayed !== undefined) {
    return reply.json(400, chatErrorBody(400, `The extra_content of tool call '${unreplayed}' was not sent back unchanged.`));
  }
  const input = replyInput(body);
  const plan = planReply(input, `call_${counter}`, options.overDelivery);
  const id = `chatcmpl-sim${counter}`;
  const usage = chatUsage(body, plan, options);
  const finishReason = plan.toolCalls.length > 0 ? 'tool_calls' : plan.truncated ? 'length' : 'stop';
  const reasoningText = options.compatReasoning && input.reasoning ? REASONING_TEXT : undefined;
  const topLogprobs = body.logprobs === true ? (body.top_logprobs ?? 0) : undefined;
  const text = plan.textChunks.join('');
  const annotations = body.web_search_options !== undefined && text !== '' ? searchAnnotations(input.lastUserText, text) : [];
  if (body.stream === true) {
    const shape = { finishReason, reasoningText, topLogprobs, annotations };
    return reply.sse(streamEvents(id, body.model, plan, shape, body.stream_options?.include_usage === true ? usage : undefined));
  }
  reply.json(200, {
    id,
    object: 'chat.completion',
    created: CREATED,
    model: body.model,
    choices: [
      {
        index: 0,
        finish_reason: finishReason,
        logprobs: topLogprobs === undefined ? null : { content: plan.textChunks.map((token) => chatTokenLogprob(token, topLogprobs)), refusal: null },
        message: {
          role: 'assistant',
          content: plan.toolCalls.length > 0 ? null : text,
          refusal: null,
          ...(reasoningText !== undefined && { reasoning_content: reasoningText }),
          ...(plan.toolCalls.length > 0 && {
            tool_calls: plan.toolCalls.map((call) => ({ ...wireToolCall(call), function: { name: call.name, arguments: call.arguments } })),
          }),
          annotations,
        },
      },
    ],
    usage,
    system_fingerprint: 'fp_sim',
    service_tier: 'default',
  });
}

interface StreamShape {
  readonly finishReason: string;
  readonly reasoningText: string | undefined;
  readonly topLogprobs: number | undefined;
  readonly annotations: readonly object[];
}

function streamEvents(id: string, model: string, plan: ReplyPlan, shape: StreamShape, usage: object | undefined): SseEvent[] {
  const chunk = (choices: object[], extra: object = {}): SseEvent => ({
    data: {
      id,
      object: 'chat.completion.chunk',
      created: CREATED,
      model,
      system_fingerprint: 'fp_sim',
      choices,
      ...(usage !== undefined && { usage: null }),
      ...extra,
    },
  });
  const delta = (value: object, finish: string | null = null, logprobs: object | null = null) =>
    chunk([{ index: 0, delta: value, logprobs, finish_reason: finish }]);
  const events: SseEvent[] = [delta({ role: 'assistant', content: '', refusal: null })];
  for (const piece of tokenize(shape.reasoningText ?? '')) events.push(delta({ reasoning_content: piece }));
  // Each text chunk is one token: its logprobs ride on it.
  const { topLogprobs } = shape;
  for (const piece of plan.textChunks) {
    events.push(delta({ content: piece }, null, topLogprobs === undefined ? null : { content: [chatTokenLogprob(piece, topLogprobs)], refusal: null }));
  }
  if (shape.annotations.length > 0) events.push(delta({ annotations: shape.annotations }));
  plan.toolCalls.forEach((call, index) => {
    events.push(delta({ tool_calls: [{ index, ...wireToolCall(call), function: { name: call.name, arguments: '' } }] }));
    // Arguments arrive in fragments, as they do from the real API.
    const middle = Math.ceil(call.arguments.length / 2);
    for (const fragment of [call.arguments.slice(0, middle), call.arguments.slice(middle)]) {
      if (fragment !== '') events.push(delta({ tool_calls: [{ index, function: { arguments: fragment } }] }));
    }
  });
  events.push(delta({}, shape.finishReason));
  if (usage !== undefined) events.push(chunk([], { usage }));
  events.push({ data: '[DONE]' });
  return events;
}

/** A call's id, type and opaque `extra_content`, the fields before its function. */
function wireToolCall(call: PlannedToolCall) {
  return { id: call.id, type: 'function', extra_content: opaqueExtraContent(call.id) };
}

/** The opaque data the simulator attaches to the tool call `callId`: nested, typed, meaningless to a client. */
export function opaqueExtraContent(callId: string): Record<string, unknown> {
  return { vendor: { state: Buffer.from(`state:${callId}`).toString('base64'), revision: 2, flags: [true, null] } };
}

/** The id of a tool call this simulator issued that came back without its extra_content unchanged. */
function unreplayedExtraContent(messages: any[]): string | undefined {
  for (const message of messages) {
    if (message?.role !== 'assistant') continue;
    for (const call of message.tool_calls ?? []) {
      if (/^call_\d+_\d+$/.test(call?.id) && !isDeepStrictEqual(call.extra_content, opaqueExtraContent(call.id))) return call.id;
    }
  }
  return undefined;
}

/**
 * The entry `logprobs.content` holds for `token`: a log probability from its length, its UTF-8
 * bytes and, when `top` asks, the token itself followed by less likely alternatives.
 */
export function chatTokenLogprob(token: string, top: number) {
  const logprob = -token.length / 100;
  const entry = (text: string, value: number) => ({ token: text, logprob: value, bytes: [...Buffer.from(text, 'utf8')] });
  const alternatives = Array.from({ length: Math.max(0, top - 1) }, (_, rank) => entry(` alt${rank + 1}`, logprob - rank - 1));
  return { ...entry(token, logprob), top_logprobs: top > 0 ? [entry(token, logprob), ...alternatives] : [] };
}

/** A search model cites a source for the whole answer. */
export function searchAnnotations(query: string, text: string): object[] {
  const url = `https://search.example/results?q=${encodeURIComponent(query)}`;
  return [{ type: 'url_citation', url_citation: { end_index: text.length, start_index: 0, title: `Results for ${query}`, url } }];
}

function chatUsage(body: any, plan: ReplyPlan, options: OpenAIChatSimulatorOptions) {
  const prompt = promptTokens([JSON.stringify(body.messages), JSON.stringify(body.tools ?? [])]);
  const cached = Math.min(options.cachedTokens ?? 0, prompt);
  return {
    prompt_tokens: prompt,
    completion_tokens: plan.outputTokens,
    total_tokens: prompt + plan.outputTokens,
    prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: plan.reasoningTokens, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function replyInput(body: any): ReplyInput {
  const messages: any[] = body.messages;
  const tail: any[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i].role === 'tool'; i--) tail.unshift(messages[i]);
  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  const format = body.response_format;
  const choice = body.tool_choice;
  return {
    lastUserText: textOf(lastUser?.content),
    toolResults: tail.map((message) => textOf(message.content)),
    tools: (body.tools ?? [])
      .filter((tool: any) => tool.type === 'function')
      .map((tool: any) => ({ name: tool.function.name, parameters: tool.function.parameters })),
    toolChoice: typeof choice === 'object' && choice !== null ? { name: choice.function?.name } : (choice ?? 'auto'),
    parallelToolCalls: body.parallel_tool_calls !== false,
    format:
      format?.type === 'json_schema'
        ? { kind: 'json_schema', schema: format.json_schema?.schema ?? {} }
        : format?.type === 'json_object'
          ? { kind: 'json_object' }
          : { kind: 'text' },
    maxOutputTokens: body.max_completion_tokens ?? body.max_tokens,
    reasoning: typeof body.reasoning_effort === 'string' && body.reasoning_effort !== 'none',
  };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.flatMap((part: any) => (part?.type === 'text' ? [part.text] : [])).join(' ');
}
