/**
 * The OpenAI Chat Completions wire format (the `openai` SDK's
 * `resources/chat/completions` types). Response types are tolerant: every field a compatible server
 * might leave out is optional, and non-standard fields that compatible servers add
 * (`reasoning_content`, `reasoning`, `extra_content`) are listed where they appear.
 * @see https://platform.openai.com/docs/api-reference/chat
 */

import { type Static, Type } from '@sinclair/typebox';
import { Maybe, Partial, TokenCount } from '../wire-schema.ts';

// ---- request ----

export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
  | { type: 'file'; file: { file_data: string; filename?: string } };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  /** Opaque provider data (Google's compatible endpoint puts thought signatures here). */
  extra_content?: Readonly<Record<string, unknown>>;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatContentPart[]; name?: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[]; name?: string }
  | { role: 'tool'; tool_call_id: string; content: string | { type: 'text'; text: string }[] };

export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ChatToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

export type ChatResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; schema: Record<string, unknown>; strict?: boolean; description?: string } };

export interface ChatRequestBody {
  model: string;
  messages: ChatMessage[];
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string[];
  presence_penalty?: number;
  frequency_penalty?: number;
  seed?: number;
  logprobs?: boolean;
  top_logprobs?: number;
  tools?: ChatTool[];
  tool_choice?: ChatToolChoice;
  parallel_tool_calls?: boolean;
  web_search_options?: Record<string, never>;
  response_format?: ChatResponseFormat;
  reasoning_effort?: string;
  verbosity?: 'low' | 'medium' | 'high';
  user?: string;
  stream?: boolean;
  stream_options?: { include_usage: boolean };
}

// ---- responses: checked against these schemas (../wire-schema.ts), only the fields read ----

const Text = Maybe(Type.String());

export const ChatUsageSchema = Partial({
  prompt_tokens: TokenCount,
  completion_tokens: TokenCount,
  total_tokens: TokenCount,
  prompt_tokens_details: Maybe(Partial({ cached_tokens: TokenCount, cache_write_tokens: TokenCount })),
  completion_tokens_details: Maybe(Partial({ reasoning_tokens: TokenCount })),
});
export type ChatUsageWire = Static<typeof ChatUsageSchema>;

const Position = Maybe(Type.Integer({ minimum: 0 }));

const ChatAnnotationSchema = Partial({
  type: Text,
  url_citation: Maybe(Partial({ url: Text, title: Text, start_index: Position, end_index: Position })),
});
export type ChatAnnotationWire = Static<typeof ChatAnnotationSchema>;

/** A tool call of a completion's message; in a chunk it also has its `index`. */
const ChatToolCallSchema = Partial({
  index: Position,
  id: Text,
  type: Text,
  function: Maybe(Partial({ name: Text, arguments: Text })),
  /** Opaque provider data (Google's compatible endpoint puts thought signatures here). */
  extra_content: Maybe(Type.Record(Type.String(), Type.Unknown())),
});
export type ChatToolCallWire = Static<typeof ChatToolCallSchema>;
export type ChatChunkToolCallWire = ChatToolCallWire;

/** What a completion's `message` and a stream chunk's `delta` both carry, every field optional. */
const ChatOutputSchema = Partial({
  role: Text,
  content: Text,
  refusal: Text,
  // Compatible servers (vLLM, DeepSeek) put the reasoning text here.
  reasoning_content: Text,
  reasoning: Text,
  tool_calls: Maybe(Type.Array(ChatToolCallSchema)),
  annotations: Maybe(Type.Array(ChatAnnotationSchema)),
});

const Bytes = Maybe(Type.Array(Type.Integer({ minimum: 0, maximum: 255 })));

/** One token's entry; token and logprob are required, as OpenAI documents them. */
const ChatTokenLogprobSchema = Type.Object({
  token: Type.String(),
  logprob: Type.Number(),
  bytes: Bytes,
  top_logprobs: Maybe(Type.Array(Type.Object({ token: Type.String(), logprob: Type.Number(), bytes: Bytes }))),
});
export type ChatTokenLogprobWire = Static<typeof ChatTokenLogprobSchema>;

/** A choice's `logprobs`: in a completion, every token; in a chunk, the tokens of its delta. */
const ChatLogprobsSchema = Partial({ content: Maybe(Type.Array(ChatTokenLogprobSchema)), refusal: Maybe(Type.Array(ChatTokenLogprobSchema)) });
export type ChatLogprobsWire = Static<typeof ChatLogprobsSchema>;

const ChatChoiceSchema = Partial({
  index: Position,
  finish_reason: Text,
  logprobs: Maybe(ChatLogprobsSchema),
  message: Maybe(ChatOutputSchema),
  delta: Maybe(ChatOutputSchema),
});

/** A completion, and equally one chunk; `error`: some compatible servers answer 200 (or a chunk) with an error envelope. */
export const ChatCompletionSchema = Partial({
  id: Text,
  model: Text,
  choices: Maybe(Type.Array(ChatChoiceSchema)),
  usage: Maybe(ChatUsageSchema),
  error: Type.Optional(Type.Unknown()),
});
export type ChatCompletionWire = Static<typeof ChatCompletionSchema>;
export type ChatChunkWire = ChatCompletionWire;
