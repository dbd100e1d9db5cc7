/**
 * An image a client sent (an edit's source or mask): base64 decoded strictly, and accepted only
 * when it really is a PNG, JPEG or WebP file of at most 8192 pixels a side. Headers are read by
 * image-size from an exact copy of the upload (core/bytes.ts); a PNG is also checked whole, in
 * bounded memory (png-check.ts): chunk CRCs, and image data that inflates to exactly the size its
 * header declares, counted while it inflates. All of this happens while the request is decoded,
 * before any credit is held: a bomb is a 400, whatever the key's balance.
 */
import { imageSize } from 'image-size';
import type { ImageInput } from '../../canonical/index.ts';
import { strictBase64 } from '../../core/base64.ts';
import { ownBytes } from '../../core/bytes.ts';
import { errors } from '../../core/errors.ts';
import { checkPng, PngRefused } from './png-check.ts';
import { MAX_IMAGE_SIDE } from './schema.ts';

/** A data URL prefix some clients put before the base64 (`data:image/png;base64,`). */
const DATA_URL = /^data:image\/[a-z+.-]+;base64,/;

/** Decodes a base64 field; a 400 naming it when it is not base64 or not an image the gateway takes. */
export async function imageFromBase64(param: string, text: string): Promise<ImageInput> {
  const payload = text.replace(DATA_URL, '');
  const decoded = strictBase64(payload);
  if (!decoded) throw errors.invalidValue(param, `'${param}' must be a base64-encoded PNG, JPEG or WebP image.`);
  return imageFromBytes(param, decoded);
}

async function imageFromBytes(param: string, upload: Uint8Array): Promise<ImageInput> {
  const data = ownBytes(upload);
  const invalid = (why?: string) => errors.invalidValue(param, `'${param}' is not a valid PNG, JPEG or WebP image${why ? ` (${why})` : ''}.`);
  // The header first: a few bytes can declare a picture of billions of pixels.
  let found: ReturnType<typeof imageSize>;
  try {
    found = imageSize(data);
  } catch {
    throw invalid();
  }
  const { width, height } = found;
  if (!width || !height) throw invalid();
  if (width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE) {
    throw errors.invalidValue(param, `'${param}' is ${width}x${height}; each side may be at most ${MAX_IMAGE_SIDE} pixels.`);
  }
  switch (found.type) {
    case 'png':
      try {
        await checkPng(data, MAX_IMAGE_SIDE);
      } catch (error) {
        if (error instanceof PngRefused) throw invalid(error.message);
        throw error;
      }
      return { data, mediaType: 'image/png', width, height };
    case 'jpg':
      return { data, mediaType: 'image/jpeg', width, height };
    case 'webp':
      return { data, mediaType: 'image/webp', width, height };
    default:
      throw invalid();
  }
}
