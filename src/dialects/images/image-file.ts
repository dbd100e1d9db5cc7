/**
 * An image a client sent (an edit's source or mask): base64 decoded strictly, and accepted only
 * when it really is a PNG, JPEG or WebP file of at most 8192 pixels a side. Headers are read by
 * image-size; PNGs are also decoded whole by fast-png (which checks the compressed data).
 */
import { decode as decodePng, hasPngSignature } from 'fast-png';
import { imageSize } from 'image-size';
import type { ImageInput } from '../../canonical/index.ts';
import { strictBase64 } from '../../core/base64.ts';
import { errors } from '../../core/errors.ts';
import { MAX_IMAGE_SIDE } from './schema.ts';

/**
 * PNGs up to this many pixels are decoded whole (at most 64 MiB of RGBA); a larger one, which a
 * body within the limits can only be if it compresses extremely well, is checked by its header.
 */
const MAX_DECODED_PIXELS = 4096 * 4096;

/** A data URL prefix some clients put before the base64 (`data:image/png;base64,`). */
const DATA_URL = /^data:image\/[a-z+.-]+;base64,/;

/** Decodes a base64 field; a 400 naming it when it is not base64 or not an image the gateway takes. */
export function imageFromBase64(param: string, text: string): ImageInput {
  const payload = text.replace(DATA_URL, '');
  const decoded = strictBase64(payload);
  if (!decoded) throw errors.invalidValue(param, `'${param}' must be a base64-encoded PNG, JPEG or WebP image.`);
  return imageFromBytes(param, decoded);
}

export function imageFromBytes(param: string, data: Uint8Array): ImageInput {
  const invalid = () => errors.invalidValue(param, `'${param}' is not a valid PNG, JPEG or WebP image.`);
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
      if (!hasPngSignature(data)) throw invalid();
      if (width * height <= MAX_DECODED_PIXELS) {
        try {
          decodePng(data);
        } catch {
          throw invalid();
        }
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
