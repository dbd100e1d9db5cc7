/**
 * CanonicalResult → the chat.completion object, shaped exactly like OpenAI's, plus
 * the gateway's `x_gateway` extension when web search was requested.
 * @see https://platform.openai.com/docs/api-reference/chat
 */
import type { CanonicalResult, Citation, ContentLogprob, FinishReason, TokenLogprob, ToolCallPart, Usage, WebSearchInfo } from '../../canonical/index.ts';
import { totalInputTokens } from '../../canonical/index.ts';
import type { TextCall, TextSettlement } from '../../pipeline/kinds/text.ts';
import { extraContentOf } from './extra-content.ts';

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; cache_creation_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  extra_content?: Readonly<Record<string, unknown>>;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: [
    {
      index: 0;
      message: {
        role: 'assistant';
        content: string | null;
        refusal: null;
        tool_calls?: ChatToolCall[];
        reasoning_content?: string;
        annotations?: ChatAnnotation[];
      };
      logprobs: ChatLogprobs | null;
      /** null only in the stored output of a stream that did not finish. */
      finish_reason: ChatFinishReason | null;
    },
  ];
  usage: ChatUsage;
  x_gateway?: { web_search: ChatWebSearch };
}

/** OpenAI's choice `logprobs`; the gateway never returns refusal text apart from the content. */
export interface ChatLogprobs {
  content: ChatTokenLogprob[];
  refusal: null;
}

export interface ChatTopLogprob {
  token: string;
  logprob: number;
  bytes: readonly number[] | null;
}

export interface ChatTokenLogprob extends ChatTopLogprob {
  top_logprobs: ChatTopLogprob[];
}

export interface ChatWebSearch {
  queries: readonly string[];
  search_entry_point_html: string;
  billed_queries: number;
}

export interface ChatAnnotation {
  type: 'url_citation';
  url_citation: { url: string; title?: string; start_index?: number; end_index?: number };
}

/** `chatcmpl-` + the gateway request id, so the id a client logs leads to the stored request. */
export function completionId(requestId: string): string {
  return `chatcmpl-${requestId.replace(/^req_/, '')}`;
}

export function encodeChatCompletion(result: CanonicalResult, call: TextCall, settlement: TextSettlement): ChatCompletion {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  for (const part of result.content) {
    if (part.type === 'text') texts.push(part.text);
    else if (part.type === 'reasoning') reasoning.push(part.text);
    else toolCalls.push(encodeToolCall(part));
  }
  const text = texts.join('');
  const message: ChatCompletion['choices'][0]['message'] = {
    role: 'assistant',
    // OpenAI sends null content beside tool calls and a string otherwise.
    content: text === '' && toolCalls.length > 0 ? null : text,
    refusal: null,
  };
  if (toolCalls.length) message.tool_calls = toolCalls;
  // The de-facto field of OpenAI-compatible servers for reasoning text (OpenAI itself sends none).
  if (reasoning.some(Boolean)) message.reasoning_content = reasoning.join('');
  if (result.citations?.length) message.annotations = result.citations.map(encodeCitation);
  const completion: ChatCompletion = {
    id: completionId(call.requestId),
    object: 'chat.completion',
    created: Math.floor(call.createdAt / 1000),
    model: call.modelId,
    choices: [
      {
        index: 0,
        message,
        logprobs: result.logprobs === undefined ? null : encodeLogprobs(result.logprobs),
        finish_reason: encodeFinishReason(result.finish.reason),
      },
    ],
    usage: encodeUsage(settlement.usage),
  };
  const webSearch = encodeWebSearch(call, result.webSearch, settlement);
  if (webSearch) completion.x_gateway = { web_search: webSearch };
  return completion;
}

export function encodeToolCall(part: ToolCallPart): ChatToolCall {
  const extra = extraContentOf(part.extraContent, part.signature);
  return {
    id: part.id,
    type: 'function',
    function: { name: part.name, arguments: part.arguments },
    ...(extra ? { extra_content: extra } : {}),
  };
}

export function encodeCitation(citation: Citation): ChatAnnotation {
  return {
    type: 'url_citation',
    url_citation: {
      url: citation.url,
      ...(citation.title === undefined ? {} : { title: citation.title }),
      ...(citation.startIndex === undefined ? {} : { start_index: citation.startIndex }),
      ...(citation.endIndex === undefined ? {} : { end_index: citation.endIndex }),
    },
  };
}

export function encodeLogprobs(logprobs: readonly ContentLogprob[]): ChatLogprobs {
  return {
    content: logprobs.map((entry) => ({ ...encodeTopLogprob(entry), top_logprobs: entry.topLogprobs.map(encodeTopLogprob) })),
    refusal: null,
  };
}

function encodeTopLogprob(entry: TokenLogprob): ChatTopLogprob {
  return { token: entry.token, logprob: entry.logprob, bytes: entry.bytes };
}

/** `error` never reaches a client as a finish reason (the pipeline sends an error instead). */
export function encodeFinishReason(reason: FinishReason): ChatFinishReason | null {
  switch (reason) {
    case 'stop':
    case 'length':
    case 'tool_calls':
    case 'content_filter':
      return reason;
    case 'error':
      return null;
    default: {
      const unreachable: never = reason;
      return unreachable;
    }
  }
}

/** docs/protocols.md: prompt_tokens counts every input token; the cached parts are details of it. */
export function encodeUsage(usage: Usage): ChatUsage {
  const prompt = totalInputTokens(usage);
  return {
    prompt_tokens: prompt,
    completion_tokens: usage.outputTokens,
    total_tokens: prompt + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cacheReadTokens, cache_creation_tokens: usage.cacheWriteTokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
}

/** Present only when the request asked for web search; `billed_queries` is what was billed. */
export function encodeWebSearch(call: TextCall, info: WebSearchInfo | undefined, settlement: TextSettlement): ChatWebSearch | undefined {
  if (call.request.webSearch !== true) return undefined;
  return {
    queries: info?.queries ?? [],
    search_entry_point_html: info?.searchEntryPointHtml ?? '',
    billed_queries: settlement.searchUnits,
  };
}
