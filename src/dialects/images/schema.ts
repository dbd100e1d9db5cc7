/**
 * The bodies of POST /v1/images/generations and POST /v1/images/edits (docs/images.md), validated
 * strictly: unknown fields are a 400, and nothing is coerced. `extra_body` is open at this level on
 * purpose: an unknown group or key is an `unsupported_parameter` named by the decoder, not a schema
 * failure, while the known keys' types and ranges are checked here.
 */
import { Type, type Static } from '@sinclair/typebox';
import { StrictObject, StringEnum } from '../schema-kit.ts';

export const MAX_PROMPT_CHARACTERS = 4000;
export const MAX_GENERATED_IMAGES = 10;
export const MAX_EDITED_IMAGES = 4;
export const MAX_IMAGE_SIDE = 8192;

export const IMAGE_QUALITIES = ['standard', 'hd', 'low', 'medium', 'high', 'auto'] as const;

const Model = Type.String({ minLength: 1, description: 'An image model id or alias.' });
const Prompt = Type.String({ minLength: 1, maxLength: MAX_PROMPT_CHARACTERS });
/** Each side is checked against 1..8192 by the decoder (a pattern cannot bound a number). */
const Size = Type.String({
  pattern: '^(auto|[0-9]+x[0-9]+)$',
  description: '`auto` or `<W>x<H>`, each side 1..8192; only sizes the selected route approves are accepted.',
});
const ResponseFormat = StringEnum(['url', 'b64_json'], { description: 'Default `url`.' });

const GpuPoolOptions = Type.Object(
  {
    num_inference_steps: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    guidance_scale: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
    seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647 })),
    negative_prompt: Type.Optional(Type.String({ maxLength: MAX_PROMPT_CHARACTERS })),
  },
  { additionalProperties: true },
);

const ExtraBody = Type.Object(
  { gpu_pool: Type.Optional(GpuPoolOptions) },
  { additionalProperties: true, description: 'Provider options: only the `gpu_pool` group, on routes that approve each key.' },
);

export const ImageGenerationRequest = StrictObject({
  model: Model,
  prompt: Prompt,
  n: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_GENERATED_IMAGES })),
  size: Type.Optional(Size),
  quality: Type.Optional(StringEnum(IMAGE_QUALITIES)),
  extra_body: Type.Optional(ExtraBody),
  response_format: Type.Optional(ResponseFormat),
  user: Type.Optional(Type.String()),
});
export type ImageGenerationBody = Static<typeof ImageGenerationRequest>;

/** The JSON form of an edit; a multipart edit is read into the same shape (files as base64). */
export const ImageEditRequest = StrictObject({
  model: Model,
  prompt: Prompt,
  image: Type.String({ minLength: 1, description: 'The source image, base64 (PNG, JPEG or WebP).' }),
  mask: Type.Optional(Type.String({ minLength: 1, description: 'base64 PNG; only on models with capabilities.image_mask.' })),
  n: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_EDITED_IMAGES })),
  size: Type.Optional(Size),
  response_format: Type.Optional(ResponseFormat),
  user: Type.Optional(Type.String()),
});
export type ImageEditBody = Static<typeof ImageEditRequest>;
