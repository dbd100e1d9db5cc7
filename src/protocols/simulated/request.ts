/**
 * What the simulated provider answers, decided from the canonical request alone, deterministically:
 * the same request always gets the same reply. It behaves like a real model where the gateway needs
 * it to: tool calls when tools are offered and tool_choice allows, schema-valid JSON for structured
 * output, reasoning text when reasoning is on, web search metadata, stop sequences and the output
 * token limit (finish `length`).
 */
import { createHash } from 'node:crypto';
import type { Citation, CanonicalRequest, Finish, FunctionTool, ToolCallPart, WebSearchInfo } from '../../canonical/index.ts';
import type { RouteEndpoint } from '../../catalog/types.ts';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../../catalog/request-bounds.ts';
import { countTextTokens, truncateToTokens } from '../../tokens/tokenizer.ts';
import { rejectParameter } from '../../policy/violation.ts';
import { InstanceTooLarge, minimalInstance } from './schema-instance.ts';
import { SIMULATED_CALL_PREFIX, signToolCall } from './signature.ts';

export interface SimulatedReply {
  readonly reasoning?: string;
  readonly text?: string;
  readonly toolCalls: readonly ToolCallPart[];
  readonly webSearch?: WebSearchInfo;
  readonly citations?: readonly Citation[];
  readonly finish: Finish;
}

/** The reply quotes at most this many words of the prompt, so its size stays bounded. */
const QUOTED_WORDS = 48;

export function composeReply(request: CanonicalRequest, endpoint: RouteEndpoint): SimulatedReply {
  const prompt = quotedPrompt(request);
  const reasoning = wantsReasoning(request) ? `The user asked: "${prompt}". Work out a short, direct answer.` : undefined;
  const webSearch = request.webSearch ? searchFor(prompt) : undefined;
  const call = chooseToolCall(request);
  if (call) return limitOutput(request, endpoint, { reasoning, toolCalls: [call], webSearch, finish: { reason: 'tool_calls', raw: 'tool_calls' } });
  const text = composeText(request, endpoint, prompt, webSearch);
  const citations = webSearch
    ? [{ url: searchUrl(webSearch.queries[0]), title: `Results for ${webSearch.queries[0]}`, startIndex: 0, endIndex: text.length }]
    : undefined;
  return limitOutput(request, endpoint, applyStop(request, { reasoning, text, toolCalls: [], webSearch, citations, finish: { reason: 'stop', raw: 'stop' } }));
}

function wantsReasoning(request: CanonicalRequest): boolean {
  const reasoning = request.reasoning;
  if (!reasoning) return false;
  switch (reasoning.kind) {
    case 'effort':
      return reasoning.effort !== 'none';
    case 'budget':
    case 'adaptive':
      return true;
    case 'disabled':
      return false;
    default: {
      const unreachable: never = reasoning;
      return unreachable;
    }
  }
}

/** The last user turn's text (or the last tool result), shortened. */
function quotedPrompt(request: CanonicalRequest): string {
  for (let index = request.messages.length - 1; index >= 0; index--) {
    const message = request.messages[index];
    const texts: string[] = [];
    for (const part of message.content) {
      if (part.type === 'text') texts.push(part.text);
      if (part.type === 'tool_result') for (const inner of part.content) if (inner.type === 'text') texts.push(inner.text);
    }
    if (texts.length) {
      const words = texts.join(' ').split(/\s+/).filter(Boolean);
      return words.slice(0, QUOTED_WORDS).join(' ') + (words.length > QUOTED_WORDS ? ' …' : '');
    }
  }
  return '';
}

function lastMessageIsToolResult(request: CanonicalRequest): boolean {
  const last = request.messages[request.messages.length - 1];
  return last !== undefined && (last.role === 'tool' || last.content.some((part) => part.type === 'tool_result'));
}

/**
 * Calls a tool when one must be called (`required`, a named tool) or, on `auto`, when the user has
 * just spoken; after tool results it answers in text, which ends a client's tool loop.
 */
function chooseToolCall(request: CanonicalRequest): ToolCallPart | undefined {
  const tools = request.tools ?? [];
  if (tools.length === 0) return undefined;
  const choice = request.toolChoice ?? { kind: 'auto' };
  let tool: FunctionTool | undefined;
  switch (choice.kind) {
    case 'none':
      return undefined;
    case 'tool':
      tool = tools.find((candidate) => candidate.name === choice.name);
      break;
    case 'required':
      tool = tools[0];
      break;
    case 'auto':
      tool = lastMessageIsToolResult(request) ? undefined : tools[0];
      break;
    default: {
      const unreachable: never = choice;
      return unreachable;
    }
  }
  if (!tool) return undefined;
  const args = JSON.stringify(tool.parameters ? boundedInstance('tools', tool.parameters) : {});
  const id = SIMULATED_CALL_PREFIX + createHash('sha256').update(`${request.messages.length}\n${tool.name}\n${args}`).digest('hex').slice(0, 24);
  return { type: 'tool_call', id, name: tool.name, arguments: args, extraContent: signToolCall(id, tool.name, args) };
}

function composeText(request: CanonicalRequest, endpoint: RouteEndpoint, prompt: string, webSearch: WebSearchInfo | undefined): string {
  const sentence = lastMessageIsToolResult(request)
    ? `The tool returned: ${prompt}`
    : `This is a simulated reply from ${endpoint.upstreamModel}. You said: ${prompt}`;
  const answer = webSearch ? `According to a web search for "${webSearch.queries[0]}": ${sentence}` : sentence;
  const format = request.responseFormat;
  if (format?.kind === 'json_schema') return JSON.stringify(boundedInstance('responseFormat', format.schema));
  if (format?.kind === 'json_object') return JSON.stringify({ reply: answer });
  return answer;
}

/** A schema's minimal instance, or the refusal a provider gives a schema it will not fill: a 400 naming the field. */
function boundedInstance(field: 'tools' | 'responseFormat', schema: unknown): unknown {
  try {
    return minimalInstance(schema);
  } catch (error) {
    if (!(error instanceof InstanceTooLarge)) throw error;
    throw rejectParameter(field, `The schema cannot be answered by the simulated provider: ${error.message}.`, 'invalid_value');
  }
}

function searchFor(prompt: string): WebSearchInfo {
  const query = prompt.split(' ').slice(0, 8).join(' ') || 'search';
  return {
    queries: [query],
    searchEntryPointHtml: `<div class="search-entry-point"><a href="${escapeHtml(searchUrl(query))}">${escapeHtml(query)}</a></div>`,
    // This provider counts executed queries.
    billedQueries: 1,
  };
}

function searchUrl(query: string): string {
  return `https://example.com/search?q=${encodeURIComponent(query)}`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** Cuts the text at the earliest stop sequence, as providers do (the sequence itself is not returned). */
function applyStop(request: CanonicalRequest, reply: SimulatedReply): SimulatedReply {
  if (!reply.text || !request.stop?.length) return reply;
  let cut: { index: number; sequence: string } | undefined;
  for (const sequence of request.stop) {
    if (!sequence) continue;
    const index = reply.text.indexOf(sequence);
    if (index >= 0 && (!cut || index < cut.index)) cut = { index, sequence };
  }
  if (!cut) return reply;
  const text = reply.text.slice(0, cut.index);
  return {
    ...reply,
    text,
    citations: reply.citations?.map((citation) => ({ ...citation, endIndex: Math.min(citation.endIndex ?? text.length, text.length) })),
    finish: { reason: 'stop', stopSequence: cut.sequence, raw: 'stop_sequence' },
  };
}

/** Spends the output budget on reasoning, then text, then tool calls; what does not fit ends in `length`. */
function limitOutput(request: CanonicalRequest, endpoint: RouteEndpoint, reply: SimulatedReply): SimulatedReply {
  let remaining = request.maxOutputTokens ?? endpoint.limits.max_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  let truncated = false;
  const fit = (text: string | undefined): string | undefined => {
    if (text === undefined) return undefined;
    const tokens = countTextTokens(text);
    if (!truncated && tokens <= remaining) {
      remaining -= tokens;
      return text;
    }
    const kept = truncated ? '' : truncateToTokens(text, remaining);
    truncated = true;
    remaining = 0;
    return kept || undefined;
  };
  const reasoning = fit(reply.reasoning);
  const text = fit(reply.text);
  const toolCalls = reply.toolCalls.filter((call) => {
    const tokens = countTextTokens(call.name) + countTextTokens(call.arguments);
    if (truncated || tokens > remaining) {
      truncated = true;
      return false;
    }
    remaining -= tokens;
    return true;
  });
  if (!truncated) return reply;
  return {
    ...reply,
    reasoning,
    text,
    toolCalls,
    citations:
      text === undefined ? undefined : reply.citations?.map((citation) => ({ ...citation, endIndex: Math.min(citation.endIndex ?? text.length, text.length) })),
    finish: { reason: 'length', raw: 'length' },
  };
}
