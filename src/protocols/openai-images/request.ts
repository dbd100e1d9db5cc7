/**
 * Canonical image requests → OpenAI Images requests: generations as JSON, edits as multipart with
 * the image and mask as files (the API takes edits only as multipart/form-data). `response_format`
 * is never sent, since GPT image models reject it; whatever comes back (base64 or a URL) is read.
 * @see https://platform.openai.com/docs/api-reference/images/create
 * @see https://platform.openai.com/docs/api-reference/images/createEdit
 */
import type { CanonicalImageRequest, ImageInput, ImageQuality } from '../../canonical/index.ts';
import type { RouteEndpoint } from '../../catalog/types.ts';
import type { ImagesRequestWire } from './wire.ts';

export function imagesRequestBody(request: CanonicalImageRequest, endpoint: RouteEndpoint, quality: ImageQuality | undefined): ImagesRequestWire {
  const body: ImagesRequestWire = { model: endpoint.upstreamModel, prompt: request.prompt, n: request.n };
  if (request.size !== undefined) body.size = request.size;
  if (quality !== undefined) body.quality = quality;
  if (request.user !== undefined) body.user = request.user;
  return body;
}

export function imagesEditForm(request: CanonicalImageRequest, endpoint: RouteEndpoint, quality: ImageQuality | undefined): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(imagesRequestBody(request, endpoint, quality))) form.append(name, String(value));
  form.append('image', fileOf(request.image!), `image.${extension(request.image!)}`);
  if (request.mask) form.append('mask', fileOf(request.mask), `mask.${extension(request.mask)}`);
  return form;
}

function fileOf(image: ImageInput): Blob {
  return new Blob([new Uint8Array(image.data)], { type: image.mediaType });
}

function extension(image: ImageInput): string {
  return image.mediaType.slice('image/'.length);
}
