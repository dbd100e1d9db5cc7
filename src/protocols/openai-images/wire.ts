/**
 * The OpenAI Images API as the gateway reads it: the answer is checked against a deliberately
 * partial schema (../wire-schema.ts), only the fields read.
 * @see https://platform.openai.com/docs/api-reference/images
 */
import { type Static, Type } from '@sinclair/typebox';
import { ImageDatumSchema } from '../image-output.ts';
import { Maybe, Partial, TokenCount } from '../wire-schema.ts';

export interface ImagesRequestWire {
  model: string;
  prompt: string;
  n: number;
  size?: string;
  quality?: string;
  user?: string;
}

export const ImagesResponseSchema = Partial({
  data: Type.Array(ImageDatumSchema),
  size: Maybe(Type.String()),
  usage: Maybe(
    Partial({
      input_tokens: TokenCount,
      input_tokens_details: Maybe(Partial({ text_tokens: TokenCount, image_tokens: TokenCount })),
      output_tokens: TokenCount,
      total_tokens: TokenCount,
    }),
  ),
});
export type ImagesResponseWire = Static<typeof ImagesResponseSchema>;
