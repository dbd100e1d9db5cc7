/**
 * The OpenAI Responses wire format (the `openai` SDK's `resources/responses`
 * types). Response and event types are tolerant: fields a compatible server might omit are optional.
 * @see https://platform.openai.com/docs/api-reference/responses
 */

// ---- request ----

export type ResponsesInputContent =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: 'auto' | 'low' | 'high' }
  | { type: 'input_file'; file_data: string; filename?: string };

export type ResponsesInputItem =
  | { type: 'message'; role: 'user'; content: ResponsesInputContent[] }
  | { type: 'message'; role: 'assistant'; content: { type: 'output_text'; text: string; annotations: [] }[] }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string | ResponsesInputContent[] }
  | ResponsesReasoningInput;

/** A reasoning item passed back: its id, its summary, and (when asked for) its encrypted content. */
export interface ResponsesReasoningInput {
  type: 'reasoning';
  id: string;
  summary: { type: 'summary_text'; text: string }[];
  encrypted_content?: string;
}

export type ResponsesTool =
  | { type: 'function'; name: string; description?: string; parameters: Record<string, unknown> | null; strict: boolean }
  | { type: 'web_search' };

export type ResponsesToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; name: string };

/** Extra output the response should carry; the gateway asks only for what it replays. */
export type ResponsesIncludable = 'reasoning.encrypted_content';

export type ResponsesTextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };

export interface ResponsesRequestBody {
  model: string;
  input: ResponsesInputItem[];
  instructions?: string;
  max_output_tokens?: number;
  temperature?: number;
  top_p?: number;
  tools?: ResponsesTool[];
  tool_choice?: ResponsesToolChoice;
  parallel_tool_calls?: boolean;
  text?: { format?: ResponsesTextFormat; verbosity?: 'low' | 'medium' | 'high' };
  reasoning?: { effort?: string; summary?: 'auto' | 'concise' | 'detailed' };
  include?: ResponsesIncludable[];
  user?: string;
  stream?: boolean;
}

// ---- responses (tolerant) ----

export interface ResponsesUsageWire {
  input_tokens?: number;
  input_tokens_details?: { cached_tokens?: number | null; cache_write_tokens?: number | null } | null;
  output_tokens?: number;
  output_tokens_details?: { reasoning_tokens?: number | null } | null;
  total_tokens?: number;
}

export interface ResponsesAnnotationWire {
  type?: string;
  url?: string;
  title?: string;
  start_index?: number;
  end_index?: number;
}

export type ResponsesContentWire =
  | { type: 'output_text'; text?: string; annotations?: ResponsesAnnotationWire[] }
  | { type: 'refusal'; refusal?: string }
  | { type: 'reasoning_text'; text?: string }
  | { type: 'summary_text'; text?: string };

export interface ResponsesOutputItemWire {
  type?: string;
  id?: string;
  status?: string;
  role?: string;
  /** message (output_text | refusal) and reasoning (reasoning_text) items. */
  content?: ResponsesContentWire[] | null;
  /** function_call items. */
  call_id?: string;
  name?: string;
  arguments?: string;
  /** reasoning items. */
  summary?: ResponsesContentWire[] | null;
  encrypted_content?: string | null;
  /** web_search_call items: what the call did (search, open_page, find_in_page). */
  action?: ResponsesWebSearchActionWire | null;
}

/** `query` is the older, deprecated field; newer servers list every query in `queries`. */
export interface ResponsesWebSearchActionWire {
  type?: string;
  query?: string | null;
  queries?: string[] | null;
  sources?: { type?: string; url?: string }[] | null;
}

export interface ResponsesErrorWire {
  code?: string | null;
  message?: string;
  type?: string;
  param?: string | null;
}

export interface ResponseObjectWire {
  id?: string;
  object?: string;
  model?: string;
  status?: string;
  output?: ResponsesOutputItemWire[] | null;
  error?: ResponsesErrorWire | null;
  incomplete_details?: { reason?: string } | null;
  usage?: ResponsesUsageWire | null;
}

/** One streamed event (`event: <type>`, data `{type, sequence_number, …}`), the fields any event type uses. */
export interface ResponsesEventWire {
  type?: string;
  sequence_number?: number;
  response?: ResponseObjectWire;
  output_index?: number;
  content_index?: number;
  summary_index?: number;
  item_id?: string;
  item?: ResponsesOutputItemWire;
  part?: ResponsesContentWire;
  delta?: string;
  text?: string;
  arguments?: string;
  /** `error` events. */
  code?: string | null;
  message?: string;
  param?: string | null;
}
