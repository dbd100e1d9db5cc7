/**
 * The chat completions request body (docs/chat-completions.md), as the JSON Schema Fastify
 * validates with and the OpenAPI document describes. Validation is strict: wrong JSON types are a
 * 400 (never coerced), unknown fields are a 400, and every limit of its table is here.
 * Rules that span fields (one web_search tool, tool_choice naming a declared tool) are in decode.ts.
 * Fields of the OpenAI API the gateway refuses (`REFUSED_FIELDS`) are accepted here only so that
 * decode.ts can name them; docs/request-fields.md decides every field of the API.
 */
import { Type, type Static } from '@sinclair/typebox';
import { FallbackModelsSchema, GatewayOptionsSchema, ProviderPreferencesSchema } from '../gateway-options.ts';
import { ArrayOr, Nullable, StrictObject, StringEnum, StringOr, Tagged } from '../schema-kit.ts';
import { refusedFieldSchemas } from '../vendor-fields.ts';

export const MAX_MESSAGES = 1000;
export const MAX_CONTENT_PARTS = 1000;
export const MAX_OUTPUT_TOKENS_LIMIT = 200_000;
export const MAX_STOP_SEQUENCES = 4;
export const MAX_TOOLS = 512;

/** OpenAI's rule for function and schema names; other providers accept a superset. */
const NAME_PATTERN = '^[a-zA-Z0-9_-]{1,64}$';

const TextPart = StrictObject({ type: Type.Literal('text'), text: Type.String() });
const RefusalPart = StrictObject({ type: Type.Literal('refusal'), refusal: Type.String() });
const ImageUrlPart = StrictObject({
  type: Type.Literal('image_url'),
  image_url: StrictObject({
    url: Type.String({ minLength: 1, description: 'An http(s) URL or a data:image/...;base64 URL.' }),
    detail: Type.Optional(StringEnum(['auto', 'low', 'high'])),
  }),
});
const FilePart = StrictObject({
  type: Type.Literal('file'),
  file: StrictObject({
    file_data: Type.String({ minLength: 1, description: 'A data: URL (data:<media type>;base64,<data>).' }),
    filename: Type.Optional(Type.String()),
  }),
});

const parts = <T extends Parameters<typeof Tagged>[1]>(variants: T) => Type.Array(Tagged('type', variants), { maxItems: MAX_CONTENT_PARTS });

const TextContent = ArrayOr(parts([TextPart]), Type.String());

export const ToolCall = StrictObject({
  id: Type.String({ minLength: 1 }),
  type: Type.Literal('function'),
  function: StrictObject({ name: Type.String({ minLength: 1 }), arguments: Type.String() }),
  extra_content: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), {
      description: 'Opaque provider data (e.g. a thought signature); send it back unchanged in the next turn.',
    }),
  ),
});

const SystemMessage = StrictObject({ role: Type.Literal('system'), content: TextContent, name: Type.Optional(Type.String()) });
const DeveloperMessage = StrictObject({ role: Type.Literal('developer'), content: TextContent, name: Type.Optional(Type.String()) });
const UserMessage = StrictObject({
  role: Type.Literal('user'),
  content: ArrayOr(parts([TextPart, ImageUrlPart, FilePart]), Type.String()),
  name: Type.Optional(Type.String()),
});
const AssistantMessage = StrictObject({
  role: Type.Literal('assistant'),
  content: ArrayOr(parts([TextPart, RefusalPart]), Type.Union([Type.String(), Type.Null()])),
  name: Type.Optional(Type.String()),
  tool_calls: Type.Optional(Type.Array(ToolCall)),
  // Fields of a returned message that clients append back to the conversation unchanged.
  refusal: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  reasoning_content: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  annotations: Type.Optional(Type.Array(Type.Unknown())),
});
const ToolMessage = StrictObject({
  role: Type.Literal('tool'),
  content: TextContent,
  tool_call_id: Type.String({ minLength: 1 }),
  name: Type.Optional(Type.String()),
});

const FunctionTool = StrictObject({
  type: Type.Literal('function'),
  function: StrictObject({
    name: Type.String({ pattern: NAME_PATTERN }),
    description: Type.Optional(Type.String()),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of the arguments object.' })),
    strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  }),
});
const WebSearchTool = StrictObject({ type: Type.Literal('web_search') });

const ResponseFormat = Tagged('type', [
  StrictObject({ type: Type.Literal('text') }),
  StrictObject({ type: Type.Literal('json_object') }),
  StrictObject({
    type: Type.Literal('json_schema'),
    json_schema: StrictObject({
      name: Type.String({ pattern: NAME_PATTERN }),
      description: Type.Optional(Type.String()),
      schema: Type.Record(Type.String(), Type.Unknown()),
      strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    }),
  }),
]);

const MaxTokens = Type.Integer({ minimum: 1, maximum: MAX_OUTPUT_TOKENS_LIMIT });

/** Fields of the OpenAI chat API the gateway refuses, each with its reason (docs/request-fields.md). */
export const REFUSED_FIELDS = {
  audio: ': audio output is not available.',
  functions: ": send function tools in 'tools'.",
  function_call: ": send 'tool_choice'.",
  logit_bias: ': token biases are not available (token ids differ between providers).',
  prediction: ': predicted outputs are not available.',
  web_search_options: ': send the tool {"type": "web_search"} in \'tools\'.',
  moderation: ': the gateway runs no moderation of its own.',
  prompt_cache_retention: ': the gateway sets no cache retention of its own; the provider default applies.',
  prompt_cache_options: ': the gateway sets no cache options of its own; the provider default applies.',
  safety_identifier: ": send the end user's identifier in 'user'.",
} as const;

export const ChatCompletionRequest = StrictObject({
  model: Type.String({ minLength: 1 }),
  messages: Type.Array(Tagged('role', [SystemMessage, DeveloperMessage, UserMessage, AssistantMessage, ToolMessage]), {
    minItems: 1,
    maxItems: MAX_MESSAGES,
  }),
  stream: Type.Optional(Type.Boolean()),
  stream_options: Type.Optional(StrictObject({ include_usage: Type.Optional(Type.Boolean()) })),
  n: Type.Optional(Type.Integer({ minimum: 1, maximum: 1, description: 'Only 1 is supported.' })),
  max_tokens: Type.Optional(MaxTokens),
  max_completion_tokens: Type.Optional(MaxTokens),
  stop: Type.Optional(ArrayOr(Type.Array(Type.String(), { maxItems: MAX_STOP_SEQUENCES }), Type.String())),
  presence_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
  frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
  seed: Type.Optional(Type.Integer()),
  parallel_tool_calls: Type.Optional(Type.Boolean()),
  logprobs: Type.Optional(Type.Boolean()),
  top_logprobs: Type.Optional(Type.Integer({ minimum: 0, maximum: 20 })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  tools: Type.Optional(Type.Array(Tagged('type', [FunctionTool, WebSearchTool]), { maxItems: MAX_TOOLS })),
  tool_choice: Type.Optional(
    StringOr(
      StringEnum(['none', 'auto', 'required']),
      StrictObject({ type: Type.Literal('function'), function: StrictObject({ name: Type.String({ minLength: 1 }) }) }),
    ),
  ),
  response_format: Type.Optional(ResponseFormat),
  reasoning_effort: Type.Optional(StringEnum(['none', 'low', 'medium', 'high'])),
  user: Type.Optional(Type.String({ description: 'End-user identifier, forwarded upstream.' })),
  verbosity: Type.Optional(Nullable(StringEnum(['low', 'medium', 'high']))),
  modalities: Type.Optional(Nullable(Type.Array(Type.Literal('text'), { description: "Only ['text']." }))),
  metadata: Type.Optional(
    Nullable(
      Type.Record(Type.String(), Type.String({ maxLength: 512 }), {
        maxProperties: 16,
        propertyNames: { minLength: 1, maxLength: 64 },
        description: 'Up to 16 labels, kept with the request; never sent upstream.',
      }),
    ),
  ),
  store: Type.Optional(Nullable(Type.Boolean({ description: 'false: the answer is not kept in the request log.' }))),
  service_tier: Type.Optional(Nullable(Type.String({ description: "'auto' or 'default': the standard tier, the one the catalog prices." }))),
  prompt_cache_key: Type.Optional(Nullable(Type.String({ description: 'A cache-routing hint; accepted and not sent upstream.' }))),
  ...refusedFieldSchemas(REFUSED_FIELDS),
  extra_body: Type.Optional(
    Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()), {
      description: 'Provider option groups (e.g. cloud_a); each option must be allowed by the route.',
    }),
  ),
  models: Type.Optional(FallbackModelsSchema),
  provider: Type.Optional(ProviderPreferencesSchema),
  gateway: Type.Optional(GatewayOptionsSchema),
});

export type ChatCompletionBody = Static<typeof ChatCompletionRequest>;
export type ChatMessageBody = ChatCompletionBody['messages'][number];
export type ChatToolCallBody = Static<typeof ToolCall>;
