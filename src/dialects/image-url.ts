/**
 * Images given as a URL string, as the OpenAI formats write them (chat's `image_url.url`, responses'
 * `input_image.image_url`): an http(s) URL is passed on as a URL, a base64 data URL as its data.
 */
import type { ImagePart } from '../canonical/index.ts';
import { errors } from '../core/errors.ts';

export function decodeImageUrl(image: { url: string; detail?: 'auto' | 'low' | 'high' }, param: string): ImagePart {
  const detail = image.detail === undefined ? {} : { detail: image.detail };
  if (/^https?:\/\//i.test(image.url)) return { type: 'image', source: { kind: 'url', url: image.url }, ...detail };
  const data = parseDataUrl(image.url);
  if (!data?.mediaType.startsWith('image/')) {
    throw errors.invalidValue(param, `'${param}' must be an http(s) URL or a data:image/...;base64 URL.`);
  }
  return { type: 'image', source: { kind: 'base64', mediaType: data.mediaType, data: data.data }, ...detail };
}

/** `data:<media type>[;params];base64,<data>`; undefined when it is not a base64 data URL. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma < 0) return undefined;
  const header = url.slice(5, comma).split(';');
  if (header[header.length - 1].toLowerCase() !== 'base64' || !header[0]) return undefined;
  const data = url.slice(comma + 1);
  if (data.length === 0) return undefined;
  return { mediaType: header[0].toLowerCase(), data };
}
