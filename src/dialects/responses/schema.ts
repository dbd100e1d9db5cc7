/**
 * The Responses request body (docs/responses.md), as the JSON Schema Fastify validates with and the
 * OpenAPI document describes. Validation is strict: wrong JSON types are a 400 (never coerced),
 * unknown fields are a 400, and every limit of its table is here.
 *
 * Fields of the OpenAI Responses API that the gateway does not implement (`REFUSED_FIELDS`,
 * `text.format`, server-side web search tools) are accepted by the schema only so that decode.ts can
 * answer them with `unsupported_parameter` naming the field, instead of a generic "unknown field".
 * docs/request-fields.md decides every field of the API.
 */
import { Type, type Static } from '@sinclair/typebox';
import { FallbackModelsSchema, GatewayOptionsSchema, ProviderPreferencesSchema } from '../gateway-options.ts';
import { ArrayOr, Nullable, StrictObject, StringEnum, StringOr, Tagged } from '../schema-kit.ts';
import { refusedFieldSchemas } from '../vendor-fields.ts';

export const MAX_INPUT_ITEMS = 1000;
export const MAX_CONTENT_PARTS = 1000;
export const MAX_TOOLS = 512;

/** OpenAI's rule for function names; other providers accept a superset. */
const NAME_PATTERN = '^[a-zA-Z0-9_-]{1,64}$';

const InputText = StrictObject({ type: Type.Literal('input_text'), text: Type.String() });
const InputImage = StrictObject({
  type: Type.Literal('input_image'),
  image_url: Type.String({ minLength: 1, description: 'An http(s) URL or a data:image/...;base64 URL.' }),
  detail: Type.Optional(StringEnum(['auto', 'low', 'high'])),
});
// Fields of a returned output_text part that clients append back to the conversation unchanged.
const OutputText = StrictObject({
  type: Type.Literal('output_text'),
  text: Type.String(),
  annotations: Type.Optional(Type.Array(Type.Unknown())),
  logprobs: Type.Optional(Type.Array(Type.Unknown())),
});
const Refusal = StrictObject({ type: Type.Literal('refusal'), refusal: Type.String() });

const parts = <T extends Parameters<typeof Tagged>[1]>(variants: T) => Type.Array(Tagged('type', variants), { maxItems: MAX_CONTENT_PARTS });

/** What every message item may carry besides role and content: the SDK's `type` and a returned item's id and status. */
const messageFields = {
  type: Type.Optional(Type.Literal('message')),
  id: Type.Optional(Type.String()),
  status: Type.Optional(StringEnum(['in_progress', 'completed', 'incomplete'])),
};
const UserContent = ArrayOr(parts([InputText, InputImage]), Type.String());
const InstructionContent = ArrayOr(parts([InputText]), Type.String());

const UserMessage = StrictObject({ role: Type.Literal('user'), content: UserContent, ...messageFields });
const SystemMessage = StrictObject({ role: Type.Literal('system'), content: InstructionContent, ...messageFields });
const DeveloperMessage = StrictObject({ role: Type.Literal('developer'), content: InstructionContent, ...messageFields });
const AssistantMessage = StrictObject({ role: Type.Literal('assistant'), content: ArrayOr(parts([OutputText, Refusal]), Type.String()), ...messageFields });

const FunctionCall = StrictObject({
  type: Type.Literal('function_call'),
  call_id: Type.String({ minLength: 1 }),
  name: Type.String({ minLength: 1 }),
  arguments: Type.String(),
  id: Type.Optional(Type.String()),
  status: Type.Optional(StringEnum(['in_progress', 'completed', 'incomplete'])),
  // The provider data a function call the gateway returned carries back (docs/responses.md).
  x_gateway: Type.Optional(StrictObject({ provider_data: Type.String() })),
});
const FunctionCallOutput = StrictObject({
  type: Type.Literal('function_call_output'),
  call_id: Type.String({ minLength: 1 }),
  output: Type.String(),
  id: Type.Optional(Type.String()),
  status: Type.Optional(StringEnum(['in_progress', 'completed', 'incomplete'])),
});

/** A returned reasoning item, appended back with the rest of a response's output. */
const Reasoning = StrictObject({
  type: Type.Literal('reasoning'),
  summary: Type.Array(StrictObject({ type: Type.Literal('summary_text'), text: Type.String() })),
  id: Type.Optional(Type.String()),
  status: Type.Optional(StringEnum(['in_progress', 'completed', 'incomplete'])),
  encrypted_content: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

const Message = Tagged('role', [UserMessage, SystemMessage, DeveloperMessage, AssistantMessage]);
const ToolItem = Tagged('type', [FunctionCall, FunctionCallOutput, Reasoning]);

/** A message (told apart by `role`, its `type` being optional) or another item (told apart by `type`). */
const InputItem = Type.Unsafe<Static<typeof Message> | Static<typeof ToolItem>>({
  if: { type: 'object', required: ['role'] },
  then: Message,
  else: ToolItem,
});

const FunctionDefinition = {
  description: Type.Optional(Type.String()),
  parameters: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], { description: 'JSON Schema of the arguments object.' })),
  strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
};
/** The chat-completions shape: `{type: function, function: {name, …}}`. */
const NestedFunctionTool = StrictObject({
  type: Type.Literal('function'),
  function: StrictObject({ name: Type.String({ pattern: NAME_PATTERN }), ...FunctionDefinition }),
});
/** The shape the OpenAI SDK sends: `{type: function, name, parameters, strict}`. */
const FlatFunctionTool = StrictObject({ type: Type.Literal('function'), name: Type.String({ pattern: NAME_PATTERN }), ...FunctionDefinition });
const FunctionToolSchema = Type.Unsafe<Static<typeof NestedFunctionTool> | Static<typeof FlatFunctionTool>>({
  if: { type: 'object', required: ['function'] },
  then: NestedFunctionTool,
  else: FlatFunctionTool,
});
/** Server-side web search: not available on this endpoint, rejected by name in decode.ts. */
const WebSearchTool = Type.Object({ type: StringEnum(['web_search', 'web_search_preview']) });
const Tool = Type.Unsafe<Static<typeof FunctionToolSchema> | Static<typeof WebSearchTool>>({
  type: 'object',
  required: ['type'],
  properties: { type: { type: 'string', enum: ['function', 'web_search', 'web_search_preview'] } },
  if: { properties: { type: { const: 'function' } } },
  then: FunctionToolSchema,
  else: WebSearchTool,
});

export const ReasoningEffortSchema = StringEnum(['none', 'low', 'medium', 'high']);

const ReasoningSummary = StringEnum(['auto', 'concise', 'detailed']);

/** Fields of the OpenAI Responses API the gateway refuses, each with its reason (docs/request-fields.md). */
export const REFUSED_FIELDS = {
  previous_response_id: ": send the whole conversation in 'input'.",
  conversation: ": send the whole conversation in 'input'.",
  prompt: ': stored prompts live in an OpenAI project, which the gateway does not reach.',
  context_management: ": send the conversation you want the model to see in 'input'.",
  response_format: ' on this endpoint.',
  parallel_tool_calls: ' on this endpoint.',
  top_logprobs: ': log probabilities are not available on this endpoint.',
  moderation: ': the gateway runs no moderation of its own.',
  prompt_cache_retention: ': the gateway sets no cache retention of its own; the provider default applies.',
  prompt_cache_options: ': the gateway sets no cache options of its own; the provider default applies.',
  safety_identifier: ": send the end user's identifier in 'user'.",
} as const;

export const ResponsesRequest = StrictObject({
  model: Type.String({ minLength: 1 }),
  input: ArrayOr(Type.Array(InputItem, { minItems: 1, maxItems: MAX_INPUT_ITEMS }), Type.String()),
  instructions: Type.Optional(Type.String()),
  max_output_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  stream: Type.Optional(Type.Boolean()),
  background: Type.Optional(
    Type.Boolean({
      description:
        'true queues the work and answers the queued response object at once, as JSON even with `stream: true`; poll GET /v1/responses/{id} (docs/responses.md).',
    }),
  ),
  tools: Type.Optional(Type.Array(Tool, { maxItems: MAX_TOOLS })),
  tool_choice: Type.Optional(
    StringOr(StringEnum(['none', 'auto', 'required']), StrictObject({ type: Type.Literal('function'), name: Type.String({ minLength: 1 }) })),
  ),
  reasoning_effort: Type.Optional(ReasoningEffortSchema),
  reasoning: Type.Optional(
    StrictObject(
      {
        effort: Type.Optional(ReasoningEffortSchema),
        summary: Type.Optional(Nullable(ReasoningSummary)),
        generate_summary: Type.Optional(Nullable(ReasoningSummary, { description: 'The deprecated spelling of `summary`.' })),
      },
      { description: '`effort` is the SDK spelling of `reasoning_effort`; `summary` asks for the reasoning summary in the output.' },
    ),
  ),
  include: Type.Optional(
    Type.Array(Type.String(), {
      maxItems: 16,
      description: "Only 'reasoning.encrypted_content', which every reasoning item the gateway returns carries anyway.",
    }),
  ),
  service_tier: Type.Optional(Nullable(Type.String({ description: "'auto' or 'default': the standard tier, the one the catalog prices." }))),
  truncation: Type.Optional(Nullable(StringEnum(['auto', 'disabled'], { description: "Only 'disabled' (the default): the gateway never drops input." }))),
  prompt_cache_key: Type.Optional(Nullable(Type.String({ description: 'A cache-routing hint; accepted and not sent upstream.' }))),
  stream_options: Type.Optional(
    Nullable(StrictObject({ include_obfuscation: Type.Optional(Type.Boolean()) }, { description: 'A delivery hint; accepted and ignored.' })),
  ),
  user: Type.Optional(Type.String({ description: 'End-user identifier, forwarded upstream.' })),
  metadata: Type.Optional(
    Type.Record(Type.String(), Type.String({ maxLength: 512 }), {
      maxProperties: 16,
      propertyNames: { minLength: 1, maxLength: 64 },
      description: 'Up to 16 labels (keys up to 64 characters, values up to 512), echoed in the response object; never sent upstream.',
    }),
  ),
  store: Type.Optional(
    Type.Boolean({ description: 'false: the response is not kept, and GET /v1/responses/{id} does not find it. A background response is always kept.' }),
  ),
  models: Type.Optional(FallbackModelsSchema),
  provider: Type.Optional(ProviderPreferencesSchema),
  gateway: Type.Optional(GatewayOptionsSchema),
  text: Type.Optional(
    StrictObject({
      // Not supported (rejected by name in decode.ts).
      format: Type.Optional(Type.Unknown()),
      verbosity: Type.Optional(Nullable(StringEnum(['low', 'medium', 'high']))),
    }),
  ),
  // Not supported (rejected by name in decode.ts).
  ...refusedFieldSchemas(REFUSED_FIELDS),
});

export type ResponsesBody = Static<typeof ResponsesRequest>;
export type ResponsesInputItem = Static<typeof InputItem>;
export type ResponsesMessageItem = Static<typeof Message>;
export type ResponsesToolBody = Static<typeof Tool>;
