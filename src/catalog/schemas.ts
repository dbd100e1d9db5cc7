/**
 * The public shapes of GET /v1/models and GET /v1/models/{model} (docs/catalog.md, "Field by
 * field", and its worked example) as JSON Schemas. The row types the catalog builds are derived
 * from them, so the derived rows, the serializer and /openapi.json cannot drift apart.
 */
import { Type, type Static } from '@sinclair/typebox';
import { CapabilitiesConfig, EndpointParametersConfig, LimitsConfig, ModelCategory, PricingUnit } from '../config/schema.ts';

/** The capabilities the API makes public; `strict_tools` is for request validation only. */
export const PUBLIC_CAPABILITIES = [
  'streaming',
  'tool_use',
  'vision',
  'json_mode',
  'structured_outputs',
  'json_mode_with_tools',
  'web_search_with_tools',
  'sampling',
  'parallel_tool_calls',
  'reasoning',
  'web_search',
  'image_generation',
  'image_editing',
  'image_mask',
  'video_generation',
  // The Messages API's thinking modes (docs/messages.md, rule 2), so a client can choose one.
  'thinking_manual',
  'thinking_adaptive',
  'thinking_disable',
] as const satisfies readonly (keyof CapabilitiesConfig)[];

export const PublicCapabilities = Type.Pick(CapabilitiesConfig, [...PUBLIC_CAPABILITIES, 'dimensions'], {
  description: 'true = supported, false = unsupported, omitted = unverified on some route',
});
export type PublicCapabilities = Static<typeof PublicCapabilities>;

/** The public limits have exactly the config's fields; omitted = unverified, [] = none supported. */
export const PublicLimits = LimitsConfig;
export type PublicLimits = Static<typeof PublicLimits>;

export const ProviderParameterConstraints = Type.Object({
  provider: Type.String({ description: 'Provider slug' }),
  parameters: EndpointParametersConfig,
});
export type ProviderParameterConstraints = Static<typeof ProviderParameterConstraints>;

const Rate = Type.Number({ minimum: 0 });
const RateFields = {
  input_per_1m: Type.Optional(Rate),
  output_per_1m: Type.Optional(Rate),
  cache_read_per_1m: Type.Optional(Rate),
  cache_write_per_1m: Type.Optional(Rate),
  cache_write_1h_per_1m: Type.Optional(Rate),
  per_image: Type.Optional(Rate),
  per_second: Type.Optional(Rate),
};

export const LongContextPricing = Type.Object({
  threshold_tokens: Type.Integer({ minimum: 1, description: 'Input above this many tokens (exclusive) uses these rates' }),
  base_input_per_1m: Rate,
  base_output_per_1m: Rate,
  input_per_1m: Rate,
  output_per_1m: Rate,
  cache_read_per_1m: Type.Optional(Rate),
});
export type LongContextPricing = Static<typeof LongContextPricing>;

export const ConsentCondition = Type.Union([Type.Literal('community_supply'), Type.Literal('training_use')]);
export type ConsentCondition = Static<typeof ConsentCondition>;

export const PricingVariant = Type.Object({
  key: Type.String(),
  price: Rate,
  meta: Type.Record(Type.String(), Type.Unknown()),
});
export type PricingVariant = Static<typeof PricingVariant>;

export const ModelPricing = Type.Object({
  unit: PricingUnit,
  conditions: Type.Optional(Type.Array(ConsentCondition, { minItems: 1, uniqueItems: true })),
  is_free: Type.Optional(Type.Literal(true)),
  ...RateFields,
  long_context: Type.Optional(LongContextPricing),
  list: Type.Optional(Type.Object(RateFields)),
  discount_percent: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
  variants: Type.Optional(Type.Array(PricingVariant)),
});
export type ModelPricing = Static<typeof ModelPricing>;

const Nullable = <Schema extends Parameters<typeof Type.Union>[0][number]>(schema: Schema) => Type.Union([schema, Type.Null()]);
const Day = Type.String({ format: 'date' });

export const PublicModel = Type.Object({
  id: Type.String(),
  aliases: Type.Array(Type.String()),
  object: Type.Literal('model'),
  owned_by: Type.String(),
  created: Type.Integer(),
  released_at: Nullable(Day),
  registered_at: Day,
  updated_at: Nullable(Type.String({ format: 'date-time' })),
  name: Type.String(),
  description: Nullable(Type.String()),
  series: Nullable(Type.String()),
  input_modalities: Type.Array(Type.String()),
  output_modalities: Type.Array(Type.String()),
  knowledge_cutoff: Nullable(Day),
  price_search_per_query: Nullable(Type.Number({ exclusiveMinimum: 0 })),
  supply: Type.Union([Type.Literal('first_party'), Type.Literal('community'), Type.Literal('mixed'), Type.Literal('none')]),
  training_use: Type.Union([Type.Literal('never'), Type.Literal('opt_in'), Type.Literal('mixed'), Type.Literal('none')]),
  category: ModelCategory,
  type: Type.String(),
  supported_endpoints: Type.Array(Type.String()),
  parameter_constraints: Type.Array(ProviderParameterConstraints),
  capabilities: PublicCapabilities,
  limits: PublicLimits,
  pricing: ModelPricing,
  available: Type.Boolean(),
  discount_percent: Nullable(Type.Number({ minimum: 0, maximum: 100 })),
});
export type ModelRow = Static<typeof PublicModel>;

export const ModelList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(PublicModel),
});

/** GET /v1/models/{model}: the id, slashes included, is the wildcard. */
export const ModelParams = Type.Object({ '*': Type.String({ description: 'Model id or alias, slashes as-is' }) });
export type ModelParams = Static<typeof ModelParams>;
