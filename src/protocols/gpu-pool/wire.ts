/**
 * A diffusion GPU pool's OpenAI-like images API (Together's shape): sizes as width and height, the
 * diffusion options at the top level, `response_format` `base64` (not `b64_json`).
 * @see https://docs.together.ai/reference/post-images-generations
 */
import { Type } from '@sinclair/typebox';
import { ImageDatumSchema } from '../image-output.ts';
import { Partial } from '../wire-schema.ts';

export interface GpuPoolRequestWire {
  model: string;
  prompt: string;
  n: number;
  width?: number;
  height?: number;
  steps?: number;
  guidance_scale?: number;
  seed?: number;
  negative_prompt?: string;
  image_url?: string;
  response_format: 'base64';
}

/** The answer, checked against this deliberately partial schema (../wire-schema.ts): the images only. */
export const GpuPoolResponseSchema = Partial({ data: Type.Array(ImageDatumSchema) });
