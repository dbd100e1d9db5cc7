/**
 * An image a client sent (an edit's source or mask): base64 decoded strictly, and accepted only
 * when it really is a PNG, JPEG or WebP file. PNGs are decoded whole by fast-png (which checks
 * every chunk's CRC and the compressed data); JPEG and WebP headers are read by image-size.
 */
import { decode as decodePng, hasPngSignature } from 'fast-png';
import { imageSize } from 'image-size';
import type { ImageInput } from '../../canonical/index.ts';
import { strictBase64 } from '../../core/base64.ts';
import { errors } from '../../core/errors.ts';

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
  if (hasPngSignature(data)) {
    try {
      const png = decodePng(data);
      return { data, mediaType: 'image/png', width: png.width, height: png.height };
    } catch {
      throw invalid();
    }
  }
  let found: ReturnType<typeof imageSize>;
  try {
    found = imageSize(data);
  } catch {
    throw invalid();
  }
  if (!found.width || !found.height) throw invalid();
  if (found.type === 'jpg') return { data, mediaType: 'image/jpeg', width: found.width, height: found.height };
  if (found.type === 'webp') return { data, mediaType: 'image/webp', width: found.width, height: found.height };
  throw invalid();
}
