/**
 * Conversation content in canonical form. Tool-call arguments stay a JSON string (the OpenAI
 * formats' representation) so that what a client sent is replayed byte for byte; protocols that
 * need an object (Anthropic, Gemini) parse it at encoding time.
 */
export interface CacheControl {
  readonly type: 'ephemeral';
  readonly ttl?: '5m' | '1h';
}

export type ImageSource = { readonly kind: 'url'; readonly url: string } | { readonly kind: 'base64'; readonly mediaType: string; readonly data: string };

export interface TextPart {
  readonly type: 'text';
  readonly text: string;
  readonly cacheControl?: CacheControl;
}

export interface ImagePart {
  readonly type: 'image';
  readonly source: ImageSource;
  readonly detail?: 'auto' | 'low' | 'high';
  readonly cacheControl?: CacheControl;
}

export interface DocumentPart {
  readonly type: 'document';
  readonly mediaType: string;
  /** base64 data, or plain text for `text/plain` documents. */
  readonly data: string;
  readonly title?: string;
  readonly cacheControl?: CacheControl;
}

/**
 * Opaque provider data attached to a tool call or reasoning part (a Gemini thought signature, an
 * Anthropic thinking signature, an OpenAI encrypted reasoning item). It is sent back unchanged to the
 * same provider family and dropped for any other.
 */
export interface OpaqueProviderData {
  readonly family: 'openai' | 'anthropic' | 'gemini';
  readonly value: string;
}

export interface ToolCallPart {
  readonly type: 'tool_call';
  readonly id: string;
  readonly name: string;
  /** JSON text of the arguments object, exactly as produced or received. */
  readonly arguments: string;
  readonly signature?: OpaqueProviderData;
  /**
   * The chat dialect's `extra_content` object on a tool call, kept verbatim so that it is replayed
   * unchanged (docs/chat-completions.md, rule 1).
   */
  readonly extraContent?: Readonly<Record<string, unknown>>;
}

export interface ToolResultPart {
  readonly type: 'tool_result';
  readonly toolCallId: string;
  /** The tool's name when the client's dialect carries it (Gemini needs it). */
  readonly name?: string;
  readonly content: readonly (TextPart | ImagePart)[];
  readonly isError?: boolean;
  readonly cacheControl?: CacheControl;
}

export interface ReasoningPart {
  readonly type: 'reasoning';
  readonly text: string;
  readonly signature?: OpaqueProviderData;
  /** Anthropic `redacted_thinking`: encrypted reasoning with no visible text. */
  readonly redacted?: boolean;
}

export type ContentPart = TextPart | ImagePart | DocumentPart | ToolCallPart | ToolResultPart | ReasoningPart;

export type UserContentPart = TextPart | ImagePart | DocumentPart | ToolResultPart;
export type AssistantContentPart = TextPart | ToolCallPart | ReasoningPart;

/** Roles are a union of shapes so that, say, a tool call can never sit in a user message. */
export type Message =
  | { readonly role: 'user'; readonly content: readonly UserContentPart[]; readonly name?: string }
  | { readonly role: 'assistant'; readonly content: readonly AssistantContentPart[]; readonly name?: string }
  | { readonly role: 'tool'; readonly content: readonly ToolResultPart[] };
