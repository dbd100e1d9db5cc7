/**
 * The OpenAI Chat Completions wire format (the `openai` SDK's
 * `resources/chat/completions` types). Response types are tolerant: every field a compatible server
 * might leave out is optional, and non-standard fields that compatible servers add
 * (`reasoning_content`, `reasoning`, `extra_content`) are listed where they appear.
 * @see https://platform.openai.com/docs/api-reference/chat
 */

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

// ---- responses (tolerant) ----

export interface ChatUsageWire {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number | null; cache_write_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
}

export interface ChatAnnotationWire {
  type?: string;
  url_citation?: { url?: string; title?: string; start_index?: number; end_index?: number };
}

export interface ChatToolCallWire {
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
  extra_content?: Record<string, unknown>;
}

/** What a completion's `message` and a stream chunk's `delta` both carry, every field optional. */
interface ChatOutputWire<ToolCall> {
  role?: string;
  content?: string | null;
  refusal?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  tool_calls?: ToolCall[] | null;
  annotations?: ChatAnnotationWire[] | null;
}

/** One token's entry; the fields OpenAI documents as required are trusted to be there. */
export interface ChatTokenLogprobWire {
  token: string;
  logprob: number;
  bytes?: number[] | null;
  top_logprobs?: { token: string; logprob: number; bytes?: number[] | null }[] | null;
}

/** A choice's `logprobs`: in a completion, every token; in a chunk, the tokens of its delta. */
export interface ChatLogprobsWire {
  content?: ChatTokenLogprobWire[] | null;
  refusal?: ChatTokenLogprobWire[] | null;
}

interface ChatChoiceWire {
  index?: number;
  finish_reason?: string | null;
  logprobs?: ChatLogprobsWire | null;
}

export interface ChatCompletionWire {
  id?: string;
  model?: string;
  choices?: (ChatChoiceWire & { message?: ChatOutputWire<ChatToolCallWire> })[];
  usage?: ChatUsageWire | null;
}

export interface ChatChunkToolCallWire extends ChatToolCallWire {
  index?: number;
}

export interface ChatChunkWire {
  id?: string;
  model?: string;
  choices?: (ChatChoiceWire & { delta?: ChatOutputWire<ChatChunkToolCallWire> })[];
  usage?: ChatUsageWire | null;
  /** A mid-stream failure: `data: {"error":{…}}`. */
  error?: ChatErrorWire;
}

export interface ChatErrorWire {
  message?: string;
  type?: string;
  param?: string | null;
  code?: string | number | null;
}
