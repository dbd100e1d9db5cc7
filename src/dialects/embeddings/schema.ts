/**
 * The body of POST /v1/embeddings (docs/embeddings.md), in the OpenAI embeddings shape
 * (https://platform.openai.com/docs/api-reference/embeddings/create), validated strictly: unknown
 * fields are a 400, and nothing is coerced. The schema states the types; the decoder states what a
 * schema cannot say well (one form per request, no empty input, the count of inputs).
 */
import { Type, type Static } from '@sinclair/typebox';
import { FallbackModelsSchema, GatewayOptionsSchema, ProviderPreferencesSchema } from '../gateway-options.ts';
import { ArrayOr, StrictObject, StringEnum } from '../schema-kit.ts';

/** The most inputs of one request, as OpenAI's API takes; a route's `limits.max_batch_inputs` may say fewer. */
export const MAX_EMBEDDING_INPUTS = 2048;

const TokenId = Type.Integer({ minimum: 0, maximum: 2_147_483_647 });

const Input = ArrayOr(Type.Array(ArrayOr(Type.Array(TokenId), Type.Union([Type.String(), TokenId]))), Type.String(), {
  description:
    'A string, an array of strings, an array of token ids (one input), or an array of arrays of token ids; ' +
    `no empty string or array, at most ${MAX_EMBEDDING_INPUTS} inputs.`,
});

export const EmbeddingsRequest = StrictObject({
  model: Type.String({ minLength: 1, description: 'An embedding model id or alias.' }),
  input: Input,
  encoding_format: Type.Optional(StringEnum(['float', 'base64'], { description: 'Default `float`; `base64` is little-endian float32.' })),
  dimensions: Type.Optional(Type.Integer({ minimum: 1, description: 'Only on models with capabilities.dimensions, within its range.' })),
  user: Type.Optional(Type.String()),
  models: Type.Optional(FallbackModelsSchema),
  provider: Type.Optional(ProviderPreferencesSchema),
  // As in the text endpoints; its caching options have nothing to cache here and change nothing.
  gateway: Type.Optional(GatewayOptionsSchema),
});
export type EmbeddingsBody = Static<typeof EmbeddingsRequest>;
