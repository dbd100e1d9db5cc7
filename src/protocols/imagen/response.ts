/** Imagen predictions → the canonical image result; a prediction filtered by safety is counted, not delivered. */
import type { CanonicalImageResult, GeneratedImage } from '../../canonical/index.ts';
import { errors } from '../../core/errors.ts';
import { base64Image, imageMediaType } from '../image-output.ts';
import type { ImagenResponseWire } from './wire.ts';

export function parseImagenResponse(body: unknown, model: string, size: string | undefined): CanonicalImageResult {
  const wire = body as ImagenResponseWire | null;
  if (!wire || !Array.isArray(wire.predictions)) throw errors.malformedUpstream('a predict response without predictions');
  const images: GeneratedImage[] = [];
  let filtered = 0;
  for (const prediction of wire.predictions) {
    if (prediction.bytesBase64Encoded === undefined) {
      filtered++;
      continue;
    }
    const data = base64Image(prediction.bytesBase64Encoded);
    images.push({ data, mediaType: imageMediaType(data), ...(prediction.prompt === undefined ? {} : { revisedPrompt: prediction.prompt }) });
  }
  return { images, providerModel: model, filtered, ...(size === undefined || size === 'auto' ? {} : { size }) };
}
