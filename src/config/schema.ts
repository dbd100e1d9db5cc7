/**
 * The operator's config file, as a JSON Schema (TypeBox) that the loader validates against; the
 * TypeScript types below are derived from it so the two cannot drift. Catalog fields use the public
 * Model's own names; see README.md ("The config file") and docs/catalog.md for what each means.
 */
import { Type, type Static } from '@sinclair/typebox';

const Decimal = Type.Number({ minimum: 0 });
const DateString = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' });

export const ProviderKind = Type.Union([
  Type.Literal('openai'),
  Type.Literal('openai-responses'),
  Type.Literal('anthropic'),
  Type.Literal('gemini'),
  Type.Literal('openai-images'),
  Type.Literal('gpu-pool'),
  Type.Literal('simulated'),
]);

/** Upstream timeouts of a provider or one of its endpoints (docs/operations.md, "Timeouts"; defaults in src/catalog/timeouts.ts). */
const TimeoutsConfig = Type.Object(
  {
    connect_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
    first_byte_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600_000 })),
    idle_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600_000 })),
    total_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400_000 })),
  },
  { additionalProperties: false },
);

export const ProviderConfig = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]*$' }),
    kind: ProviderKind,
    base_url: Type.Optional(Type.String({ minLength: 1 })),
    /** Name of the environment variable holding the credential; never the secret itself. */
    api_key_env: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' })),
    /** Upstream timeout in milliseconds: time to first byte and idle time, unless `timeouts` says otherwise. */
    timeout_ms: Type.Optional(Type.Integer({ minimum: 1 })),
    timeouts: Type.Optional(TimeoutsConfig),
    /** Options for the built-in simulated provider (pace of streamed chunks). */
    simulated: Type.Optional(
      Type.Object(
        {
          chunk_delay_ms: Type.Optional(Type.Integer({ minimum: 0 })),
          /** How long it takes before it answers: the whole answer of a plain call, the first event of a stream. */
          latency_ms: Type.Optional(Type.Integer({ minimum: 0 })),
          /** How long a simulated video takes to generate (its operation is "running" until then). */
          video_delay_ms: Type.Optional(Type.Integer({ minimum: 0 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const RateKeys = {
  input_per_1m: Type.Optional(Decimal),
  output_per_1m: Type.Optional(Decimal),
  cache_read_per_1m: Type.Optional(Decimal),
  cache_write_per_1m: Type.Optional(Decimal),
  cache_write_1h_per_1m: Type.Optional(Decimal),
  per_image: Type.Optional(Decimal),
  per_second: Type.Optional(Decimal),
};

export const LongContextConfig = Type.Object(
  {
    threshold_tokens: Type.Integer({ minimum: 1 }),
    input_per_1m: Decimal,
    output_per_1m: Decimal,
    cache_read_per_1m: Type.Optional(Decimal),
    cache_write_per_1m: Type.Optional(Decimal),
    cache_write_1h_per_1m: Type.Optional(Decimal),
  },
  { additionalProperties: false },
);

export const VariantConfig = Type.Object(
  {
    key: Type.String({ minLength: 1 }),
    price: Decimal,
    meta: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

export const PricingUnit = Type.Union([Type.Literal('per_1m_tokens'), Type.Literal('per_image'), Type.Literal('per_second'), Type.Literal('per_request')]);

export const EndpointPricingConfig = Type.Object(
  {
    unit: PricingUnit,
    ...RateKeys,
    per_request: Type.Optional(Decimal),
    /** Provider list prices before discount, same keys as the rates. */
    list: Type.Optional(Type.Object(RateKeys, { additionalProperties: false })),
    long_context: Type.Optional(LongContextConfig),
    variants: Type.Optional(Type.Array(VariantConfig)),
  },
  { additionalProperties: false },
);

const Bool = Type.Optional(Type.Boolean());
export const CapabilitiesConfig = Type.Object(
  {
    streaming: Bool,
    tool_use: Bool,
    vision: Bool,
    json_mode: Bool,
    structured_outputs: Bool,
    json_mode_with_tools: Bool,
    web_search_with_tools: Bool,
    sampling: Bool,
    parallel_tool_calls: Bool,
    reasoning: Bool,
    web_search: Bool,
    image_generation: Bool,
    image_editing: Bool,
    image_mask: Bool,
    video_generation: Bool,
    /** Messages-style thinking modes: manual budgets, adaptive thinking, and whether thinking can be turned off. */
    thinking_manual: Bool,
    thinking_adaptive: Bool,
    thinking_disable: Bool,
    /** Per-tool `strict: true` on function tools. */
    strict_tools: Bool,
    /**
     * Embedding routes: the output sizes a request's `dimensions` may ask for (docs/embeddings.md);
     * absent, `dimensions` is refused. `maximum` is also the size of a vector when none is asked.
     */
    dimensions: Type.Optional(Type.Object({ minimum: Type.Integer({ minimum: 1 }), maximum: Type.Integer({ minimum: 1 }) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

export const ReasoningEffortValue = Type.Union([Type.Literal('none'), Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')]);

export const LimitsConfig = Type.Object(
  {
    max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    context_window: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    max_images: Type.Optional(Type.Integer({ minimum: 0 })),
    max_duration_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
    supported_sizes: Type.Optional(Type.Array(Type.String())),
    supported_formats: Type.Optional(Type.Array(Type.String())),
    reasoning_efforts: Type.Optional(Type.Array(ReasoningEffortValue)),
    supported_qualities: Type.Optional(Type.Array(Type.String())),
    supported_durations: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }))),
    /** Embedding routes: the most input tokens of one request, all inputs together. */
    max_input_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Embedding routes: the most inputs of one request. */
    max_batch_inputs: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

export const ParameterConstraintConfig = Type.Object(
  {
    supported: Type.Optional(Type.Boolean()),
    type: Type.Optional(
      Type.Union([
        Type.Literal('string'),
        Type.Literal('number'),
        Type.Literal('integer'),
        Type.Literal('boolean'),
        Type.Literal('array'),
        Type.Literal('object'),
      ]),
    ),
    allowed_values: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Number(), Type.Boolean()]))),
    minimum: Type.Optional(Type.Number()),
    maximum: Type.Optional(Type.Number()),
  },
  { additionalProperties: false },
);

/**
 * How a video route treats the duration (docs/video.md, "Durations"): the explicit durations it
 * takes are `limits.supported_durations` (and `limits.max_duration_seconds`); a pricing variant's
 * `meta.supported_durations` narrows them for that variant.
 */
export const VideoRulesConfig = Type.Object(
  {
    /** Seconds generated when the request names none; default: the largest supported duration, else 8. */
    default_duration_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 120 })),
    /** false: the model chooses the duration itself and rejects an explicit one. */
    explicit_duration: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const ConstraintMap = Type.Record(Type.String(), ParameterConstraintConfig);
export const EndpointParametersConfig = Type.Object(
  {
    chat: Type.Optional(ConstraintMap),
    'image-generation': Type.Optional(ConstraintMap),
    'image-edit': Type.Optional(ConstraintMap),
    video: Type.Optional(ConstraintMap),
  },
  { additionalProperties: false },
);

/** What a model produces: text, images, video, or embeddings. */
export const ModelCategory = Type.Union([Type.Literal('LLM'), Type.Literal('IMAGE'), Type.Literal('VIDEO'), Type.Literal('EMBEDDING')]);

export const EndpointConfig = Type.Object(
  {
    provider: Type.String({ minLength: 1 }),
    /** The upstream model name. */
    model: Type.String({ minLength: 1 }),
    supply: Type.Union([Type.Literal('first_party'), Type.Literal('community')]),
    training_use: Type.Union([Type.Literal('never'), Type.Literal('opt_in')]),
    /** Disabled endpoints stay configured but take no traffic and count for nothing public. */
    enabled: Type.Optional(Type.Boolean()),
    /**
     * A manually pinned reference: billed at its own prices when routed to, but never the source
     * of the public lowest price (docs/catalog.md, "Pricing", rule 5).
     */
    pinned: Type.Optional(Type.Boolean()),
    pricing: EndpointPricingConfig,
    /** Reference USD per search billing unit; omitted when the route has no web search. */
    search_price_per_query: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    /** How search is counted: per executed query, or one unit per search-enabled request. */
    search_billing: Type.Optional(Type.Union([Type.Literal('per_query'), Type.Literal('per_request')])),
    capabilities: Type.Optional(CapabilitiesConfig),
    limits: Type.Optional(LimitsConfig),
    parameters: Type.Optional(EndpointParametersConfig),
    /** Video routes only. */
    video: Type.Optional(VideoRulesConfig),
    /** This endpoint's own timeouts, over its provider's. */
    timeouts: Type.Optional(TimeoutsConfig),
    latency_ms: Type.Optional(Type.Number({ minimum: 0 })),
    throughput_tps: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false },
);

export const ModelConfig = Type.Object(
  {
    id: Type.String({ pattern: '^gateway/[A-Za-z0-9][A-Za-z0-9._:/-]*$' }),
    name: Type.String({ minLength: 1 }),
    aliases: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    owned_by: Type.String({ minLength: 1 }),
    category: ModelCategory,
    type: Type.String({ minLength: 1 }),
    released_at: Type.Optional(Type.Union([DateString, Type.Null()])),
    registered_at: Type.Optional(DateString),
    updated_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
    description: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    series: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    input_modalities: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
    output_modalities: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
    knowledge_cutoff: Type.Optional(Type.Union([DateString, Type.Null()])),
    /** A model-specific promotion; takes precedence over the global one. */
    discount_percent: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()])),
    supported_endpoints: Type.Optional(Type.Array(Type.String())),
    endpoints: Type.Array(EndpointConfig, { minItems: 1 }),
  },
  { additionalProperties: false },
);

/** Webhook delivery (docs/webhooks.md); every key optional, with the defaults of src/webhooks/settings.ts. */
export const WebhooksConfig = Type.Object(
  {
    /** Lets webhook URLs reach loopback, private and other non-public addresses (a test or a closed network). */
    allow_private_addresses: Type.Optional(Type.Boolean()),
    /** How long one delivery attempt may take, connection included (ms). */
    timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
    /** Deliveries one instance sends at once. */
    concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000 })),
    /** How often an instance looks for ended jobs and due deliveries (ms). */
    poll_interval_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600_000 })),
    /** The first retry's delay; each later one doubles it, with jitter, up to retry_max_ms (ms). */
    retry_base_ms: Type.Optional(Type.Integer({ minimum: 1 })),
    retry_max_ms: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

/**
 * One rule of who a single sign-on user becomes (docs/dashboard.md, "Single sign-on"): matched on
 * the email's domain and/or a claim's value (a string claim equal to it, or an array claim holding it).
 */
export const SsoRoleRule = Type.Object(
  {
    domain: Type.Optional(Type.String({ minLength: 1 })),
    claim: Type.Optional(Type.String({ minLength: 1 })),
    value: Type.Optional(Type.String({ minLength: 1 })),
    role: Type.Union([Type.Literal('operator'), Type.Literal('member')]),
    account_id: Type.Optional(Type.String({ minLength: 1 })),
    organization_id: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

/** OpenID Connect sign-in to the dashboard (authorization code with PKCE). */
export const SsoConfig = Type.Object(
  {
    /** The provider's issuer URL; its discovery document is read at the first sign-in. */
    issuer: Type.String({ minLength: 1 }),
    client_id: Type.String({ minLength: 1 }),
    /** The environment variable holding the client secret. */
    client_secret_env: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }),
    /** Only emails of these domains may sign in (lower case). */
    allowed_domains: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
    /** The first rule that matches gives a new user's role; no match, no sign-in. */
    roles: Type.Array(SsoRoleRule, { minItems: 1 }),
    /** The button's label on the sign-in page. Default "Sign in with single sign-on". */
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { additionalProperties: false },
);

export const GatewayConfig = Type.Object(
  {
    providers: Type.Array(ProviderConfig, { minItems: 1 }),
    models: Type.Array(ModelConfig),
    promotions: Type.Optional(Type.Object({ discount_percent: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })) }, { additionalProperties: false })),
    billing: Type.Optional(
      Type.Object(
        {
          /** Multiplier applied to catalog reference prices for accounts without their own rate. */
          default_rate: Type.Optional(Type.Number({ minimum: 0 })),
          /** Credit granted to the demo account created on first start (USD). */
          demo_credit_usd: Type.Optional(Type.Number({ minimum: 0 })),
          /** How long a credit reservation lives before the sweeper releases it (seconds). */
          reservation_ttl_seconds: Type.Optional(Type.Integer({ minimum: 1 })),
          /**
           * PostgreSQL: how long an instance's heartbeat may be missing before another instance
           * releases its credit holds (seconds; it beats every third of this).
           */
          instance_lapse_seconds: Type.Optional(Type.Integer({ minimum: 3 })),
        },
        { additionalProperties: false },
      ),
    ),
    /** Background jobs (docs/jobs.md). */
    jobs: Type.Optional(
      Type.Object(
        {
          /** How many background responses (and other jobs that hold a slot to their end) one instance runs at once. */
          concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
          /** How many steps of long operations (a video's start, or one look at it) one instance runs at once. */
          operation_steps: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
          /** How long a worker's claim on a job lasts without a heartbeat before another instance may take it over (seconds). */
          lease_seconds: Type.Optional(Type.Integer({ minimum: 2, maximum: 3600 })),
          /** How often an idle instance looks for queued jobs (milliseconds). */
          poll_interval_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: 60_000 })),
        },
        { additionalProperties: false },
      ),
    ),
    /** How video jobs follow their upstream operations (docs/video.md); defaults in src/jobs/video-settings.ts. */
    videos: Type.Optional(
      Type.Object(
        {
          /** The first wait between two looks at an operation; each later one doubles, up to max_poll_interval_ms. */
          poll_interval_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: 600_000 })),
          max_poll_interval_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: 600_000 })),
          /** An operation not done this long after the job was created is given up: the job fails and its hold is released (seconds). */
          timeout_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
        },
        { additionalProperties: false },
      ),
    ),
    webhooks: Type.Optional(WebhooksConfig),
    /** The dashboard (docs/dashboard.md). */
    dashboard: Type.Optional(
      Type.Object(
        {
          sso: Type.Optional(SsoConfig),
          /** The share of an instance's time the dashboard's heavy reads may take (docs/dashboard.md); default 0.02. */
          read_share: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
          /**
           * scrypt's cost of new password hashes (docs/dashboard.md, "Users and sign-in"); default
           * N = 32768, p = 3. The least allowed, N = 16384 and p = 1, is libsodium's interactive baseline.
           */
          password_hashing: Type.Optional(
            Type.Object(
              {
                n: Type.Union([Type.Literal(16_384), Type.Literal(32_768), Type.Literal(65_536), Type.Literal(131_072)]),
                p: Type.Integer({ minimum: 1, maximum: 16 }),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    /** Circuit breakers of provider endpoints (docs/operations.md, "Circuit breakers"); defaults in src/routing/breaker.ts. */
    breakers: Type.Optional(
      Type.Object(
        {
          /** False: every endpoint is always tried in plan order (health is still observed and shown). */
          enabled: Type.Optional(Type.Boolean()),
          /** The sliding window the failure rate is measured over (milliseconds). */
          window_ms: Type.Optional(Type.Integer({ minimum: 1000, maximum: 3_600_000 })),
          /** Attempts the window must hold before the failure rate can open the breaker. */
          min_requests: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
          /** The failure rate that opens the breaker, in percent of the window's attempts. */
          failure_rate_percent: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
          /** How long an opened breaker skips its endpoint before a probe; doubled at each reopening (milliseconds). */
          cooldown_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: 3_600_000 })),
          /** The longest cool-down the doubling reaches (milliseconds). */
          max_cooldown_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: 3_600_000 })),
        },
        { additionalProperties: false },
      ),
    ),
    /** Per-key and per-organization limits (docs/limits.md). */
    rate_limits: Type.Optional(
      Type.Object(
        {
          /**
           * What a limited key's request gets while the counters (Redis) cannot be reached: `open`
           * admits it (a warning and gateway_limit_backend_failures_total), `closed` refuses it
           * with 503 limits_unavailable. Default `open`.
           */
          on_backend_failure: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed')])),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export type ProviderKind = Static<typeof ProviderKind>;
export type ProviderConfig = Static<typeof ProviderConfig>;
export type EndpointPricingConfig = Static<typeof EndpointPricingConfig>;
export type LongContextConfig = Static<typeof LongContextConfig>;
export type VariantConfig = Static<typeof VariantConfig>;
export type PricingUnit = Static<typeof PricingUnit>;
export type CapabilitiesConfig = Static<typeof CapabilitiesConfig>;
export type LimitsConfig = Static<typeof LimitsConfig>;
export type ParameterConstraintConfig = Static<typeof ParameterConstraintConfig>;
export type EndpointParametersConfig = Static<typeof EndpointParametersConfig>;
export type EndpointConfig = Static<typeof EndpointConfig>;
export type ModelConfig = Static<typeof ModelConfig>;
export type WebhooksConfig = Static<typeof WebhooksConfig>;
export type SsoConfig = Static<typeof SsoConfig>;
export type SsoRoleRule = Static<typeof SsoRoleRule>;
export type GatewayConfig = Static<typeof GatewayConfig>;

/** How an endpoint bills web search: per executed query unless it says per request. */
export function searchBillingOf(endpoint: EndpointConfig): 'per_query' | 'per_request' {
  return endpoint.search_billing ?? 'per_query';
}
