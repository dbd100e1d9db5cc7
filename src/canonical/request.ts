/**
 * The canonical request: what every dialect decodes into and every protocol encodes from.
 * A field that is undefined was not given by the client; omission is never a value (the API makes
 * `reasoning_effort: none` differ from no effort at all, and `logprobs: false` differ from absence).
 */
import type { CacheControl, ContentPart, Message } from './message.ts';

export type ReasoningEffort = 'none' | 'low' | 'medium' | 'high';

/** The reasoning controls of the three dialects, kept distinct: none is converted into another. */
export type ReasoningRequest =
  | { readonly kind: 'effort'; readonly effort: ReasoningEffort }
  | { readonly kind: 'budget'; readonly budgetTokens: number }
  | { readonly kind: 'adaptive' }
  | { readonly kind: 'disabled' };

export interface FunctionTool {
  readonly name: string;
  /** Example argument objects (Anthropic's `input_examples`); only an Anthropic upstream can take them. */
  readonly inputExamples?: readonly Readonly<Record<string, unknown>>[];
  readonly description?: string;
  /** JSON Schema of the arguments object. */
  readonly parameters?: Record<string, unknown>;
  readonly strict?: boolean;
  readonly cacheControl?: CacheControl;
}

export type ToolChoice =
  | { readonly kind: 'auto' }
  | { readonly kind: 'none' }
  | { readonly kind: 'required' }
  | { readonly kind: 'tool'; readonly name: string };

/** How long the answer should be (OpenAI's `verbosity`, `text.verbosity`). */
export type Verbosity = 'low' | 'medium' | 'high';

/** How much of its reasoning the model should summarise in the answer (OpenAI's `reasoning.summary`). */
export type ReasoningSummary = 'auto' | 'concise' | 'detailed';

/** How many tokens the model may spend on the whole answer (Anthropic's `output_config.effort`). */
export type OutputEffort = 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export type ResponseFormat =
  | { readonly kind: 'text' }
  | { readonly kind: 'json_object' }
  | {
      readonly kind: 'json_schema';
      readonly name: string;
      readonly schema: Record<string, unknown>;
      readonly strict?: boolean;
      readonly description?: string;
    };

export type ProviderSort = 'price' | 'latency' | 'throughput';

export interface ProviderPreferences {
  readonly sort?: ProviderSort;
  /** Default true: on a retryable upstream failure, try the model's next endpoint. */
  readonly allowFallbacks?: boolean;
}

export interface CacheOptions {
  readonly mode?: 'on' | 'off';
  readonly ttl?: '5m' | '1h';
}

/** The dialect that produced the request; used for parameter names in errors and for logging only. */
export type DialectName = 'chat' | 'messages' | 'responses';

/** Request fields a canonical request may carry, by canonical name (used for param rejections). */
export type CanonicalParam =
  | 'stop'
  | 'seed'
  | 'presencePenalty'
  | 'frequencyPenalty'
  | 'logprobs'
  | 'topLogprobs'
  | 'temperature'
  | 'topP'
  | 'topK'
  | 'parallelToolCalls'
  | 'responseFormat'
  | 'reasoning'
  | 'webSearch'
  | 'tools'
  | 'toolChoice'
  | 'user'
  | 'verbosity'
  | 'reasoningSummary'
  | 'outputEffort'
  | 'toolInputExamples';

export interface CanonicalRequest {
  readonly dialect: DialectName;
  /** The model name as the client wrote it (an id or an alias), resolved by the catalog. */
  readonly model: string;
  /** The `models` fallback list, walked in order during resolution and validation. */
  readonly fallbackModels: readonly string[];
  /** System and developer instructions, in order, hoisted out of the conversation. */
  readonly system: readonly SystemBlock[];
  readonly messages: readonly Message[];
  readonly maxOutputTokens?: number;
  readonly temperature?: number;
  readonly topP?: number;
  readonly topK?: number;
  readonly stop?: readonly string[];
  readonly presencePenalty?: number;
  readonly frequencyPenalty?: number;
  readonly seed?: number;
  readonly logprobs?: boolean;
  readonly topLogprobs?: number;
  readonly tools?: readonly FunctionTool[];
  /** `tools: [{type: web_search}]` on chat completions; web search is not a function tool. */
  readonly webSearch?: boolean;
  readonly toolChoice?: ToolChoice;
  readonly parallelToolCalls?: boolean;
  readonly responseFormat?: ResponseFormat;
  readonly reasoning?: ReasoningRequest;
  readonly reasoningSummary?: ReasoningSummary;
  readonly verbosity?: Verbosity;
  readonly outputEffort?: OutputEffort;
  readonly stream: boolean;
  /** Chat's `stream_options.include_usage`; the other dialects always carry usage. */
  readonly includeUsage?: boolean;
  readonly user?: string;
  /**
   * The client's own key-value labels (the Responses API's `metadata`): echoed in the answer where
   * the dialect has the field, kept with the stored answer, never sent upstream.
   */
  readonly metadata?: Readonly<Record<string, string>>;
  /** false: the answer is not kept in the request log (the API's `store: false`); see MeteredRequest. */
  readonly store?: boolean;
  readonly cache?: CacheOptions;
  readonly provider?: ProviderPreferences;
  /** Provider option groups (`extra_body`), validated by policy against the route's constraints. */
  readonly extraBody?: Readonly<Record<string, unknown>>;
  /**
   * The messages dialect's `anthropic-beta` header values, forwarded only to Anthropic upstreams
   * (as the same header); every other protocol ignores them.
   */
  readonly betas?: readonly string[];
}

export interface SystemBlock {
  readonly text: string;
  readonly cacheControl?: CacheControl;
}

export type { ContentPart, Message };
