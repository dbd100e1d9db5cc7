/**
 * The OpenAI Responses wire format (the `openai` SDK's `resources/responses`
 * types). Response and event types are tolerant: fields a compatible server might omit are optional.
 * @see https://platform.openai.com/docs/api-reference/responses
 */

import { type Static, Type } from '@sinclair/typebox';
import { Maybe, Partial, TokenCount } from '../wire-schema.ts';

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

// ---- responses: checked against these schemas (../wire-schema.ts), only the fields read ----

const Text = Maybe(Type.String());
const Position = Maybe(Type.Integer({ minimum: 0 }));

export const ResponsesUsageSchema = Partial({
  input_tokens: TokenCount,
  input_tokens_details: Maybe(Partial({ cached_tokens: TokenCount, cache_write_tokens: TokenCount })),
  output_tokens: TokenCount,
  output_tokens_details: Maybe(Partial({ reasoning_tokens: TokenCount })),
  total_tokens: TokenCount,
});
export type ResponsesUsageWire = Static<typeof ResponsesUsageSchema>;

const ResponsesAnnotationSchema = Partial({ type: Text, url: Text, title: Text, start_index: Position, end_index: Position });
export type ResponsesAnnotationWire = Static<typeof ResponsesAnnotationSchema>;

/** A content part: output_text (with annotations), refusal, reasoning_text or summary_text. */
const ResponsesContentSchema = Partial({ type: Text, text: Text, refusal: Text, annotations: Maybe(Type.Array(ResponsesAnnotationSchema)) });
export type ResponsesContentWire = Static<typeof ResponsesContentSchema>;

/** `query` is the older, deprecated field; newer servers list every query in `queries`. */
const ResponsesWebSearchActionSchema = Partial({
  type: Text,
  query: Text,
  queries: Maybe(Type.Array(Type.String())),
  sources: Maybe(Type.Array(Partial({ type: Text, url: Text }))),
});

const ResponsesOutputItemSchema = Partial({
  type: Text,
  id: Text,
  status: Text,
  role: Text,
  /** message (output_text | refusal) and reasoning (reasoning_text) items. */
  content: Maybe(Type.Array(ResponsesContentSchema)),
  /** function_call items. */
  call_id: Text,
  name: Text,
  arguments: Text,
  /** reasoning items. */
  summary: Maybe(Type.Array(ResponsesContentSchema)),
  encrypted_content: Text,
  /** web_search_call items: what the call did (search, open_page, find_in_page). */
  action: Maybe(ResponsesWebSearchActionSchema),
});
export type ResponsesOutputItemWire = Static<typeof ResponsesOutputItemSchema>;

export const ResponseObjectSchema = Partial({
  id: Text,
  object: Text,
  model: Text,
  status: Text,
  output: Maybe(Type.Array(ResponsesOutputItemSchema)),
  /** Read by errors.ts, which trusts none of its fields. */
  error: Type.Optional(Type.Unknown()),
  incomplete_details: Maybe(Partial({ reason: Text })),
  usage: Maybe(ResponsesUsageSchema),
});
export type ResponseObjectWire = Static<typeof ResponseObjectSchema>;

/** One streamed event (`event: <type>`, data `{type, sequence_number, …}`), the fields any event type uses. */
export const ResponsesEventSchema = Partial({
  type: Text,
  sequence_number: Maybe(Type.Integer()),
  response: Maybe(ResponseObjectSchema),
  output_index: Position,
  content_index: Position,
  summary_index: Position,
  item_id: Text,
  item: Maybe(ResponsesOutputItemSchema),
  part: Maybe(ResponsesContentSchema),
  delta: Text,
  text: Text,
  arguments: Text,
  /** `error` events (read by errors.ts, nested or flat). */
  error: Type.Optional(Type.Unknown()),
});
export type ResponsesEventWire = Static<typeof ResponsesEventSchema>;
