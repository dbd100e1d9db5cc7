/**
 * The Anthropic Messages wire format (`@anthropic-ai/sdk`
 * `resources/messages/messages.d.ts`). Request types are exact: the gateway only sends what they
 * allow. Response and event types are tolerant: every field may be missing, and block or delta types
 * the gateway does not use (server tools other than web search, citations of documents) pass
 * through as unknown strings.
 * @see https://docs.anthropic.com/en/api/messages
 */

import { type Static, Type } from '@sinclair/typebox';
import { Maybe, Partial, TokenCount } from '../wire-schema.ts';

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

// ---- responses: checked against these schemas (../wire-schema.ts), only the fields read ----

const Text = Maybe(Type.String());

export const AnthropicUsageSchema = Partial({
  input_tokens: TokenCount,
  output_tokens: TokenCount,
  cache_creation_input_tokens: TokenCount,
  cache_read_input_tokens: TokenCount,
  /** cache_creation_input_tokens split by lifetime (absent from older responses). */
  cache_creation: Maybe(Partial({ ephemeral_5m_input_tokens: TokenCount, ephemeral_1h_input_tokens: TokenCount })),
  output_tokens_details: Maybe(Partial({ thinking_tokens: TokenCount })),
  server_tool_use: Maybe(Partial({ web_search_requests: TokenCount })),
});
export type AnthropicUsageWire = Static<typeof AnthropicUsageSchema>;

const AnthropicCitationSchema = Partial({ type: Text, url: Text, title: Text });
export type AnthropicCitationWire = Static<typeof AnthropicCitationSchema>;

const AnthropicContentBlockSchema = Partial({
  type: Text,
  text: Text,
  citations: Maybe(Type.Array(AnthropicCitationSchema)),
  thinking: Text,
  signature: Text,
  data: Text,
  id: Text,
  name: Text,
  input: Type.Optional(Type.Unknown()),
  /** `web_search_tool_result`: the call it answers, and a list of results or an error object. */
  tool_use_id: Text,
  content: Type.Optional(Type.Unknown()),
});
export type AnthropicContentBlockWire = Static<typeof AnthropicContentBlockSchema>;

/** Why a `refusal` stopped the answer. */
const AnthropicStopDetailsSchema = Partial({ type: Text, category: Text, explanation: Text });
export type AnthropicStopDetailsWire = Static<typeof AnthropicStopDetailsSchema>;

export const AnthropicMessageSchema = Partial({
  id: Text,
  type: Text,
  model: Text,
  content: Maybe(Type.Array(AnthropicContentBlockSchema)),
  stop_reason: Text,
  stop_sequence: Text,
  stop_details: Maybe(AnthropicStopDetailsSchema),
  usage: Maybe(AnthropicUsageSchema),
});
export type AnthropicMessageWire = Static<typeof AnthropicMessageSchema>;

const AnthropicDeltaSchema = Partial({
  type: Text,
  text: Text,
  partial_json: Text,
  thinking: Text,
  signature: Text,
  citation: Maybe(AnthropicCitationSchema),
  stop_reason: Text,
  stop_sequence: Text,
  stop_details: Maybe(AnthropicStopDetailsSchema),
});
export type AnthropicDeltaWire = Static<typeof AnthropicDeltaSchema>;

/** One streaming event's data; `type` equals the SSE event name. */
export const AnthropicEventSchema = Partial({
  type: Text,
  message: Maybe(AnthropicMessageSchema),
  index: Maybe(Type.Integer({ minimum: 0 })),
  content_block: Maybe(AnthropicContentBlockSchema),
  delta: Maybe(AnthropicDeltaSchema),
  usage: Maybe(AnthropicUsageSchema),
  /** `error` events (read by errors.ts, which trusts none of its fields). */
  error: Type.Optional(Type.Unknown()),
});
export type AnthropicEventWire = Static<typeof AnthropicEventSchema>;
