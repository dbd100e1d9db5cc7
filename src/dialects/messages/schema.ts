/**
 * The POST /v1/messages body (docs/messages.md), as the JSON Schema Fastify validates with and the
 * OpenAPI document describes; POST /v1/messages/count_tokens takes the same body with `max_tokens`
 * optional. Validation is strict: wrong JSON types are a 400 (never coerced), unknown fields and
 * block types are a 400, and every limit of the endpoint's table is here. Where the Messages API
 * accepts `null` for an optional field (`cache_control`, `metadata.user_id`), null means "not given".
 * Rules that span fields (a thinking budget below `max_tokens`, tool_choice naming a declared
 * tool, no server tools) are in decode.ts. Fields of the Messages API the gateway refuses
 * (`REFUSED_FIELDS`) are accepted here only so that decode.ts can name them; docs/request-fields.md
 * decides every field of the API.
 *
 * Block shapes follow the Messages API reference: https://docs.anthropic.com/en/api/messages
 */
import { Type, type Static } from '@sinclair/typebox';
import { FallbackModelsSchema, GatewayOptionsSchema, ProviderPreferencesSchema } from '../gateway-options.ts';
import { ArrayOr, Nullable, StrictObject, StringEnum, Tagged } from '../schema-kit.ts';
import { refusedFieldSchemas } from '../vendor-fields.ts';

export const MAX_OUTPUT_TOKENS_LIMIT = 200_000;
export const MAX_STOP_SEQUENCES = 8;
export const MIN_THINKING_BUDGET = 1024;
export const MAX_THINKING_BUDGET = MAX_OUTPUT_TOKENS_LIMIT - 1;

/** The Messages API's rule for tool names, which every upstream accepts. */
const TOOL_NAME_PATTERN = '^[a-zA-Z0-9_-]{1,64}$';

const CacheControl = Nullable(StrictObject({ type: Type.Literal('ephemeral'), ttl: Type.Optional(StringEnum(['5m', '1h'])) }), {
  description: 'A prompt-cache breakpoint after this block; passed through in place.',
});

const TextBlock = StrictObject({
  type: Type.Literal('text'),
  text: Type.String(),
  cache_control: Type.Optional(CacheControl),
  // A returned text block carries `citations: null`; clients send the block back as they got it.
  citations: Type.Optional(Type.Null()),
});

const ImageBlock = StrictObject({
  type: Type.Literal('image'),
  source: Tagged('type', [
    StrictObject({
      type: Type.Literal('base64'),
      media_type: StringEnum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
      data: Type.String({ minLength: 1 }),
    }),
    StrictObject({ type: Type.Literal('url'), url: Type.String({ pattern: '^https?://', description: 'An http(s) URL.' }) }),
  ]),
  cache_control: Type.Optional(CacheControl),
});

const DocumentBlock = StrictObject({
  type: Type.Literal('document'),
  source: Tagged('type', [
    StrictObject({ type: Type.Literal('base64'), media_type: Type.Literal('application/pdf'), data: Type.String({ minLength: 1 }) }),
    StrictObject({ type: Type.Literal('text'), media_type: Type.Literal('text/plain'), data: Type.String() }),
  ]),
  title: Type.Optional(Nullable(Type.String())),
  cache_control: Type.Optional(CacheControl),
});

const ToolUseBlock = StrictObject({
  type: Type.Literal('tool_use'),
  id: Type.String({ minLength: 1 }),
  name: Type.String({ minLength: 1 }),
  input: Type.Record(Type.String(), Type.Unknown(), { description: 'The arguments object the model produced.' }),
  cache_control: Type.Optional(CacheControl),
  // A returned tool_use block says who called the tool; a client-executed tool is always called directly.
  caller: Type.Optional(StrictObject({ type: Type.Literal('direct') })),
});

const ToolResultBlock = StrictObject({
  type: Type.Literal('tool_result'),
  tool_use_id: Type.String({ minLength: 1 }),
  content: Type.Optional(ArrayOr(Type.Array(Tagged('type', [TextBlock, ImageBlock])), Type.String())),
  is_error: Type.Optional(Type.Boolean()),
  cache_control: Type.Optional(CacheControl),
});

const ThinkingBlock = StrictObject({
  type: Type.Literal('thinking'),
  thinking: Type.String(),
  signature: Type.String({ description: 'Opaque; send it back unchanged.' }),
});

const RedactedThinkingBlock = StrictObject({
  type: Type.Literal('redacted_thinking'),
  data: Type.String({ minLength: 1, description: 'Opaque; send it back unchanged.' }),
});

/** An empty content array is refused by every upstream; it is a 400 here, before any credit moves. */
const blocks = <T extends Parameters<typeof Tagged>[1]>(variants: T) => Type.Array(Tagged('type', variants), { minItems: 1 });

const UserMessage = StrictObject({
  role: Type.Literal('user'),
  content: ArrayOr(blocks([TextBlock, ImageBlock, DocumentBlock, ToolResultBlock]), Type.String()),
});
const AssistantMessage = StrictObject({
  role: Type.Literal('assistant'),
  content: ArrayOr(blocks([TextBlock, ToolUseBlock, ThinkingBlock, RedactedThinkingBlock]), Type.String()),
});

const CustomTool = StrictObject({
  type: Type.Optional(Nullable(Type.Literal('custom'))),
  name: Type.String({ pattern: TOOL_NAME_PATTERN }),
  description: Type.Optional(Type.String()),
  input_schema: Type.Unsafe<{ type: 'object'; [keyword: string]: unknown }>(
    Type.Object({ type: Type.Literal('object') }, { additionalProperties: true, description: 'JSON Schema of the input object (`type: "object"`).' }),
  ),
  strict: Type.Optional(Type.Boolean()),
  cache_control: Type.Optional(CacheControl),
  input_examples: Type.Optional(
    Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'Example input objects; sent to Anthropic upstreams only.' }),
  ),
  eager_input_streaming: Type.Optional(Nullable(Type.Boolean({ description: 'A delivery hint; accepted and ignored.' }))),
  defer_loading: Type.Optional(Type.Boolean({ description: 'Only false: tool search is a server tool, which the gateway does not run.' })),
  allowed_callers: Type.Optional(Type.Array(Type.String(), { description: "Only ['direct']: the gateway runs no code execution tool." })),
});

/**
 * A tool of any other `type` is one the provider would run itself (`web_search_20250305`,
 * `bash_20250124`, …). The schema lets it through so that decode.ts can say why it is refused.
 */
const ServerTool = Type.Object({ type: Type.String(), name: Type.Optional(Type.String()) });

export type ServerToolBody = Static<typeof ServerTool>;
export type CustomToolBody = Static<typeof CustomTool>;

const ToolSchema = Type.Unsafe<CustomToolBody | ServerToolBody>({
  if: { type: 'object', required: ['type'], properties: { type: { type: 'string', not: { const: 'custom' } } } },
  then: ServerTool,
  else: CustomTool,
});

const parallelSwitch = { disable_parallel_tool_use: Type.Optional(Type.Boolean()) };
const ToolChoice = Tagged('type', [
  StrictObject({ type: Type.Literal('auto'), ...parallelSwitch }),
  StrictObject({ type: Type.Literal('any'), ...parallelSwitch }),
  StrictObject({ type: Type.Literal('tool'), name: Type.String({ minLength: 1 }), ...parallelSwitch }),
  StrictObject({ type: Type.Literal('none') }),
]);

const Thinking = Tagged('type', [
  StrictObject({
    type: Type.Literal('enabled'),
    budget_tokens: Type.Integer({ minimum: MIN_THINKING_BUDGET, maximum: MAX_THINKING_BUDGET, description: 'Below max_tokens.' }),
  }),
  StrictObject({ type: Type.Literal('adaptive') }),
  StrictObject({ type: Type.Literal('disabled') }),
]);

const MaxTokens = Type.Integer({ minimum: 1, maximum: MAX_OUTPUT_TOKENS_LIMIT });

const OutputConfig = StrictObject({
  effort: Type.Optional(Nullable(StringEnum(['low', 'medium', 'high', 'xhigh', 'max']))),
  format: Type.Optional(Nullable(StrictObject({ type: Type.Literal('json_schema'), schema: Type.Record(Type.String(), Type.Unknown()) }))),
});

/** Fields of the Messages API the gateway refuses, each with its reason (docs/request-fields.md). */
export const REFUSED_FIELDS = {
  container: ': code execution is a server tool, which the gateway does not run.',
  inference_geo: ': the gateway prices inference in the provider default region only.',
  cache_control: ": mark the blocks to cache with their own 'cache_control', or set 'gateway.cache'.",
} as const;

/** Every field but `max_tokens`, whose presence is what tells the two endpoints' bodies apart. */
const bodyFields = {
  model: Type.String({ minLength: 1 }),
  messages: Type.Array(Tagged('role', [UserMessage, AssistantMessage]), { minItems: 1 }),
  system: Type.Optional(ArrayOr(Type.Array(Tagged('type', [TextBlock])), Type.String())),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  top_k: Type.Optional(Type.Integer({ minimum: 1 })),
  stop_sequences: Type.Optional(Type.Array(Type.String(), { maxItems: MAX_STOP_SEQUENCES })),
  stream: Type.Optional(Type.Boolean()),
  tools: Type.Optional(Type.Array(ToolSchema)),
  tool_choice: Type.Optional(ToolChoice),
  metadata: Type.Optional(StrictObject({ user_id: Type.Optional(Nullable(Type.String({ description: 'End-user identifier, forwarded upstream.' }))) })),
  thinking: Type.Optional(Thinking),
  output_config: Type.Optional(OutputConfig),
  service_tier: Type.Optional(Type.String({ description: "'auto' or 'standard_only': the standard tier, the one the catalog prices; not sent upstream." })),
  ...refusedFieldSchemas(REFUSED_FIELDS),
  gateway: Type.Optional(GatewayOptionsSchema),
  models: Type.Optional(FallbackModelsSchema),
  provider: Type.Optional(ProviderPreferencesSchema),
};

export const MessagesRequest = StrictObject({ ...bodyFields, max_tokens: MaxTokens });
export const CountTokensRequest = StrictObject({ ...bodyFields, max_tokens: Type.Optional(MaxTokens) });

export const CountTokensResult = Type.Object({ input_tokens: Type.Integer({ minimum: 1 }) });

export type MessagesBody = Static<typeof MessagesRequest>;
export type CountTokensBody = Static<typeof CountTokensRequest>;
export type MessageBody = MessagesBody['messages'][number];
