/**
 * Imagen's `:predict` as the gateway sends and reads it. Editing uses the Vertex AI shape (the
 * source image and mask as reference images).
 * @see https://ai.google.dev/gemini-api/docs/imagen
 * @see https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/imagen-api-edit
 */
import { Type } from '@sinclair/typebox';
import { Maybe, Partial } from '../wire-schema.ts';

export interface ImagenReferenceImage {
  referenceType: 'REFERENCE_TYPE_RAW' | 'REFERENCE_TYPE_MASK';
  referenceId: number;
  referenceImage: { bytesBase64Encoded: string; mimeType: string };
  maskImageConfig?: { maskMode: 'MASK_MODE_USER_PROVIDED' };
}

export interface ImagenRequestWire {
  instances: { prompt: string; referenceImages?: ImagenReferenceImage[] }[];
  parameters: { sampleCount: number; aspectRatio?: string; editMode?: string };
}

/**
 * The answer, checked against this deliberately partial schema (../wire-schema.ts): each
 * prediction's bytes (absent when safety filtered it) and rewritten prompt.
 */
export const ImagenResponseSchema = Partial({
  predictions: Type.Array(Partial({ bytesBase64Encoded: Maybe(Type.String()), prompt: Maybe(Type.String()) })),
});
