/**
 * The attributes of the gateway's spans: the GenAI semantic conventions
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/) where they name a fact, and
 * `gateway.*` for the rest (the endpoint, the cost, the request's status). Plain data: only
 * counts, names, ids and money, never a key, a prompt or an answer.
 */
import type { ProviderKind } from '../config/schema.ts';
import { formatUsd } from '../core/money.ts';
import type { RequestLogRecord } from '../storage/store.ts';

export type SpanAttributes = Record<string, string | number | boolean>;

/** The GenAI attribute names, as the conventions spell them (their constants left the semantic-conventions package). */
export const GEN_AI = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheCreationTokens: 'gen_ai.usage.cache_creation.input_tokens',
} as const;

/**
 * `gen_ai.operation.name` of a capability: the conventions' `chat` and `embeddings`, and
 * `generate_content` (multimodal generation) for images and video, which have no value of their own.
 */
export function operationName(capability: string): string {
  switch (capability) {
    case 'chat':
      return 'chat';
    case 'embeddings':
      return 'embeddings';
    default:
      return 'generate_content';
  }
}

/** `gen_ai.provider.name`: the conventions' value for the provider family a kind speaks to, else the kind itself. */
export function providerName(kind: ProviderKind): string {
  switch (kind) {
    case 'openai':
    case 'openai-responses':
    case 'openai-images':
      return 'openai';
    case 'anthropic':
      return 'anthropic';
    case 'gemini':
      return 'gcp.gemini';
    case 'gpu-pool':
    case 'simulated':
      return kind;
    default: {
      const unknown: never = kind;
      return unknown;
    }
  }
}

/** What a call's request log row says: the served model, the tokens (cached ones in the input too, as the conventions ask), the cost. */
export function recordAttributes(record: RequestLogRecord): SpanAttributes {
  const attributes: SpanAttributes = {
    [GEN_AI.inputTokens]: record.inputTokens + record.cacheReadTokens + record.cacheWriteTokens,
    [GEN_AI.outputTokens]: record.outputTokens,
    [GEN_AI.cacheReadTokens]: record.cacheReadTokens,
    [GEN_AI.cacheCreationTokens]: record.cacheWriteTokens,
    'gateway.request.status': record.status,
    'gateway.stream': record.stream,
    'gateway.cost.usd': formatUsd(record.cost),
  };
  // A JavaScript number holds an exact integer up to 2^53 pico-dollars (about 9,000 USD); the USD string always.
  if (record.cost <= BigInt(Number.MAX_SAFE_INTEGER)) attributes['gateway.cost.picos'] = Number(record.cost);
  if (record.model !== null) attributes[GEN_AI.responseModel] = record.model;
  if (record.provider !== null) {
    attributes['gateway.provider.id'] = record.provider;
    attributes['gateway.endpoint'] = `${record.provider}:${record.upstreamModel}`;
  }
  if (record.firstByteMs !== null) attributes['gateway.first_byte_ms'] = record.firstByteMs;
  if (record.errorCode !== null) attributes['error.type'] = record.errorCode;
  return attributes;
}
