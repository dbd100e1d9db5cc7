/** Imagen predictions → the canonical image result; a prediction filtered by safety is counted, not delivered. */
import type { CanonicalImageResult, GeneratedImage } from '../../canonical/index.ts';
import { base64Image, imageMediaType } from '../image-output.ts';
import { checkedBody, wireCheck } from '../wire-schema.ts';
import { ImagenResponseSchema } from './wire.ts';

const checkPredictions = wireCheck(ImagenResponseSchema, 'a predict response');

export function parseImagenResponse(body: unknown, model: string, size: string | undefined): CanonicalImageResult {
  const wire = checkedBody(checkPredictions, body);
  const images: GeneratedImage[] = [];
  let filtered = 0;
  for (const prediction of wire.predictions) {
    if (prediction.bytesBase64Encoded == null) {
      filtered++;
      continue;
    }
    const received = base64Image(prediction.bytesBase64Encoded);
    images.push({ ...received, mediaType: imageMediaType(received.data), ...(prediction.prompt == null ? {} : { revisedPrompt: prediction.prompt }) });
  }
  return { images, providerModel: model, filtered, ...(size === undefined || size === 'auto' ? {} : { size }) };
}
