/**
 * The Anthropic Messages wire format (`@anthropic-ai/sdk`
 * `resources/messages/messages.d.ts`). Request types are exact: the gateway only sends what they
 * allow. Response and event types are tolerant: every field may be missing, and block or delta types
 * the gateway does not use (server tools other than web search, citations of documents) pass
 * through as unknown strings.
 * @see https://docs.anthropic.com/en/api/messages
 */

// ---- request ----

export interface AnthropicCacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export type AnthropicImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

export type AnthropicDocumentSource = { type: 'base64'; media_type: string; data: string } | { type: 'text'; media_type: 'text/plain'; data: string };

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicImageBlock {
  type: 'image';
  source: AnthropicImageSource;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicDocumentBlock {
  type: 'document';
  source: AnthropicDocumentSource;
  title?: string;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: (AnthropicTextBlock | AnthropicImageBlock)[];
  is_error?: boolean;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface AnthropicThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface AnthropicRedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

export type AnthropicUserBlock = AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock | AnthropicToolResultBlock;
export type AnthropicAssistantBlock = AnthropicTextBlock | AnthropicToolUseBlock | AnthropicThinkingBlock | AnthropicRedactedThinkingBlock;

export type AnthropicMessage = { role: 'user'; content: AnthropicUserBlock[] } | { role: 'assistant'; content: AnthropicAssistantBlock[] };

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  strict?: boolean;
  input_examples?: Readonly<Record<string, unknown>>[];
  cache_control?: AnthropicCacheControl;
}

/** The server-side web search tool (`web_search_20250305`), run by the API within the turn. */
export interface AnthropicWebSearchTool {
  type: 'web_search_20250305';
  name: 'web_search';
  max_uses?: number;
  cache_control?: AnthropicCacheControl;
}

export type AnthropicToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export type AnthropicThinking = { type: 'enabled'; budget_tokens: number } | { type: 'adaptive' } | { type: 'disabled' };

export type AnthropicEffort = 'low' | 'medium' | 'high';

export interface AnthropicOutputConfig {
  effort?: AnthropicEffort | 'xhigh' | 'max';
  format?: { type: 'json_schema'; schema: Record<string, unknown> };
}

export interface AnthropicRequestBody {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: AnthropicTextBlock[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  tools?: (AnthropicTool | AnthropicWebSearchTool)[];
  tool_choice?: AnthropicToolChoice;
  thinking?: AnthropicThinking;
  output_config?: AnthropicOutputConfig;
  metadata?: { user_id: string };
  stream?: boolean;
}

// ---- responses (tolerant) ----

export interface AnthropicUsageWire {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  /** cache_creation_input_tokens split by lifetime (absent from older responses). */
  cache_creation?: { ephemeral_5m_input_tokens?: number | null; ephemeral_1h_input_tokens?: number | null } | null;
  output_tokens_details?: { thinking_tokens?: number | null } | null;
  server_tool_use?: { web_search_requests?: number | null } | null;
}

export interface AnthropicCitationWire {
  type?: string;
  url?: string;
  title?: string | null;
}

export interface AnthropicContentBlockWire {
  type?: string;
  text?: string;
  citations?: AnthropicCitationWire[] | null;
  thinking?: string;
  signature?: string;
  data?: string;
  id?: string;
  name?: string;
  input?: unknown;
  /** `web_search_tool_result`: the call it answers, and a list of results or an error object. */
  tool_use_id?: string;
  content?: unknown;
}

export interface AnthropicMessageWire {
  id?: string;
  type?: string;
  model?: string;
  content?: AnthropicContentBlockWire[];
  stop_reason?: string | null;
  stop_sequence?: string | null;
  stop_details?: AnthropicStopDetailsWire | null;
  usage?: AnthropicUsageWire;
}

/** Why a `refusal` stopped the answer. */
export interface AnthropicStopDetailsWire {
  type?: string;
  category?: string | null;
  explanation?: string | null;
}

export interface AnthropicErrorWire {
  type?: string;
  message?: string;
  details?: { error_code?: string } | null;
}

export interface AnthropicDeltaWire {
  type?: string;
  text?: string;
  partial_json?: string;
  thinking?: string;
  signature?: string;
  citation?: AnthropicCitationWire;
  stop_reason?: string | null;
  stop_sequence?: string | null;
  stop_details?: AnthropicStopDetailsWire | null;
}

/** One streaming event's data; `type` equals the SSE event name. */
export interface AnthropicEventWire {
  type?: string;
  message?: AnthropicMessageWire;
  index?: number;
  content_block?: AnthropicContentBlockWire;
  delta?: AnthropicDeltaWire;
  usage?: AnthropicUsageWire;
  error?: AnthropicErrorWire;
}
