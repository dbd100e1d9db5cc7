/**
 * Canonical image requests → Imagen `:predict` bodies: the count as `sampleCount`, an approved size
 * as its aspect ratio (the family's nearest; policy has checked one exists), and an edit's image
 * and mask as reference images, inpainting where a mask is given.
 */
import type { CanonicalImageRequest, ImageInput } from '../../canonical/index.ts';
import { aspectRatioOf } from '../../policy/image-family.ts';
import { rejectImageParameter } from '../../policy/violation.ts';
import type { ImagenReferenceImage, ImagenRequestWire } from './wire.ts';

export const IMAGEN_ASPECT_RATIOS = ['1:1', '3:4', '4:3', '9:16', '16:9'] as const;

export function imagenBody(request: CanonicalImageRequest): ImagenRequestWire {
  const body: ImagenRequestWire = { instances: [{ prompt: request.prompt }], parameters: { sampleCount: request.n } };
  if (request.size !== undefined && request.size !== 'auto') {
    const ratio = aspectRatioOf(request.size, IMAGEN_ASPECT_RATIOS);
    if (ratio === undefined) throw rejectImageParameter('size', `size ${request.size} has no Imagen aspect ratio`);
    body.parameters.aspectRatio = ratio;
  }
  if (request.operation === 'edit') {
    const references: ImagenReferenceImage[] = [reference('REFERENCE_TYPE_RAW', 1, request.image!)];
    if (request.mask) references.push({ ...reference('REFERENCE_TYPE_MASK', 2, request.mask), maskImageConfig: { maskMode: 'MASK_MODE_USER_PROVIDED' } });
    body.instances[0].referenceImages = references;
    body.parameters.editMode = request.mask ? 'EDIT_MODE_INPAINT_INSERTION' : 'EDIT_MODE_DEFAULT';
  }
  return body;
}

function reference(referenceType: ImagenReferenceImage['referenceType'], referenceId: number, image: ImageInput): ImagenReferenceImage {
  return { referenceType, referenceId, referenceImage: { bytesBase64Encoded: Buffer.from(image.data).toString('base64'), mimeType: image.mediaType } };
}
