/**
 * What every image protocol does with the images an upstream answers: base64 decoded strictly, an
 * upstream URL downloaded (clients only ever get the gateway's own URLs), and the format told from
 * the bytes themselves rather than trusted from a label.
 */
import type { ImageMediaType } from '../canonical/index.ts';
import { strictBase64 } from '../core/base64.ts';
import { errors } from '../core/errors.ts';
import { getBytes, type JsonCallOptions } from './transport/json-call.ts';

export function base64Image(text: unknown): Uint8Array {
  const decoded = typeof text === 'string' ? strictBase64(text) : undefined;
  if (!decoded) throw errors.malformedUpstream('an image that is not valid base64');
  return decoded;
}

export async function downloadedImage(url: string, options: JsonCallOptions): Promise<Uint8Array> {
  if (!/^https?:\/\//.test(url)) throw errors.malformedUpstream(`an image URL that is not http(s)`);
  return getBytes(url, { ...options, headers: {} });
}

/** PNG, JPEG or WebP by their signatures; anything else is a malformed answer. */
export function imageMediaType(bytes: Uint8Array): ImageMediaType {
  if (bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (Buffer.from(bytes.subarray(0, 4)).toString('latin1') === 'RIFF' && Buffer.from(bytes.subarray(8, 12)).toString('latin1') === 'WEBP') return 'image/webp';
  throw errors.malformedUpstream('an image that is not PNG, JPEG or WebP');
}

/** The multipart body of a form, encoded by the platform's own FormData encoder. */
export async function encodeForm(form: FormData): Promise<{ bytes: Uint8Array; contentType: string }> {
  const encoded = new Response(form);
  return { bytes: new Uint8Array(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! };
}
