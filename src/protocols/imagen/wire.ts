/**
 * Imagen's `:predict` as the gateway sends and reads it. Editing uses the Vertex AI shape (the
 * source image and mask as reference images).
 * @see https://ai.google.dev/gemini-api/docs/imagen
 * @see https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/imagen-api-edit
 */
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

export interface ImagenResponseWire {
  readonly predictions?: readonly {
    readonly bytesBase64Encoded?: string;
    readonly mimeType?: string;
    readonly prompt?: string;
    readonly raiFilteredReason?: string;
  }[];
}
