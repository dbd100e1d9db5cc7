/**
 * The deterministic "model" behind every simulator: from a protocol-neutral view of the request it
 * plans the reply (text split into chunks, tool calls, structured JSON, a length stop). Each
 * simulator extracts the view from its own wire format and renders the plan in it, so all simulators
 * answer the same conversation the same way.
 */

export interface ReplyTool {
  readonly name: string;
  readonly parameters?: Record<string, unknown>;
}

export interface ReplyInput {
  /** Text of the last user turn ('' when it held only tool results or images). */
  readonly lastUserText: string;
  /** Tool results in the last turn, in order; non-empty means the tool loop is being closed. */
  readonly toolResults: readonly string[];
  readonly tools: readonly ReplyTool[];
  /** 'auto' | 'none' | 'required' | a tool name. */
  readonly toolChoice: 'auto' | 'none' | 'required' | { readonly name: string };
  readonly parallelToolCalls: boolean;
  readonly format: { readonly kind: 'text' } | { readonly kind: 'json_object' } | { readonly kind: 'json_schema'; readonly schema: Record<string, unknown> };
  readonly maxOutputTokens?: number;
  /** Whether the request asked for reasoning (an effort other than none, a thinking budget…). */
  readonly reasoning: boolean;
}

export interface PlannedToolCall {
  readonly id: string;
  readonly name: string;
  /** JSON text, as the OpenAI formats carry it. */
  readonly arguments: string;
}

export interface ReplyPlan {
  /** Text chunks, one per streamed delta; joined they are the whole text. One token each. */
  readonly textChunks: readonly string[];
  readonly toolCalls: readonly PlannedToolCall[];
  /** True when max output tokens cut the text short. */
  readonly truncated: boolean;
  readonly reasoningTokens: number;
  readonly outputTokens: number;
}

/** The reasoning text simulators expose when configured to (compatible servers, summaries). */
export const REASONING_TEXT = 'Thinking it over step by step.';

/**
 * An upstream that gives and reports more than it was asked for (every simulator takes it as its
 * `overDelivery` option): the gateway must never charge beyond the request's hold.
 */
export interface OverDelivery {
  /** Writes the whole reply whatever the request's max output tokens. */
  readonly ignoreMaxTokens?: boolean;
  /** Output tokens reported on top of those written (a provider that counts differently). */
  readonly extraOutputTokens?: number;
}

export function planReply(input: ReplyInput, callPrefix: string, overDelivery: OverDelivery = {}): ReplyPlan {
  const reasoningTokens = input.reasoning ? tokenize(REASONING_TEXT).length : 0;
  const extra = overDelivery.extraOutputTokens ?? 0;
  const toolCalls = chooseToolCalls(input, callPrefix);
  if (toolCalls.length > 0) {
    return { textChunks: [], toolCalls, truncated: false, reasoningTokens, outputTokens: reasoningTokens + toolCalls.length * 8 + extra };
  }
  const chunks = tokenize(replyText(input));
  const maxOutputTokens = overDelivery.ignoreMaxTokens ? undefined : input.maxOutputTokens;
  const budget = maxOutputTokens === undefined ? chunks.length : Math.max(0, maxOutputTokens - reasoningTokens);
  const kept = chunks.slice(0, budget);
  return { textChunks: kept, toolCalls: [], truncated: kept.length < chunks.length, reasoningTokens, outputTokens: reasoningTokens + kept.length + extra };
}

function replyText(input: ReplyInput): string {
  switch (input.format.kind) {
    case 'json_schema':
      return JSON.stringify(sampleFromSchema(input.format.schema));
    case 'json_object':
      return JSON.stringify({ echo: input.lastUserText });
    case 'text':
      return input.toolResults.length > 0 ? `Tool results: ${input.toolResults.join('; ')}` : `Echo: ${input.lastUserText}`;
  }
}

/** Tools are called on a fresh user turn, never right after results came back (the loop closes). */
function chooseToolCalls(input: ReplyInput, callPrefix: string): PlannedToolCall[] {
  if (input.tools.length === 0 || input.toolResults.length > 0 || input.toolChoice === 'none') return [];
  const chosen =
    typeof input.toolChoice === 'object'
      ? input.tools.filter((tool) => tool.name === (input.toolChoice as { name: string }).name)
      : input.tools.slice(0, input.parallelToolCalls ? 2 : 1);
  return chosen.map((tool, index) => ({
    id: `${callPrefix}_${index}`,
    name: tool.name,
    arguments: JSON.stringify(sampleFromSchema(tool.parameters ?? {})),
  }));
}

/** A value that satisfies the simple JSON Schemas tests use (objects, strings, numbers, enums, arrays). */
export function sampleFromSchema(schema: Record<string, unknown>): unknown {
  if (Array.isArray(schema.enum)) return schema.enum[0];
  switch (schema.type) {
    case 'string':
      return 'sample';
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [sampleFromSchema((schema.items as Record<string, unknown>) ?? {})];
    case 'null':
      return null;
    default: {
      const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      return Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, sampleFromSchema(property)]));
    }
  }
}

/** Splits text into word-ish tokens (leading space kept), the unit simulators count and stream. */
export function tokenize(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [];
}

/** A deterministic prompt token count: one per 4 characters of the request's text. */
export function promptTokens(texts: readonly string[]): number {
  return Math.max(1, Math.ceil(texts.join('').length / 4));
}
