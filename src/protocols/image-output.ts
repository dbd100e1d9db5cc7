/**
 * What every image protocol does with the images an upstream answers: base64 decoded strictly, an
 * upstream URL downloaded (clients only ever get the gateway's own URLs), and the format told from
 * the bytes themselves rather than trusted from a label.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { ImageMediaType } from '../canonical/index.ts';
import { isCanonicalBase64, strictBase64 } from '../core/base64.ts';
import { errors } from '../core/errors.ts';
import { getBytes, type JsonCallOptions } from './transport/json-call.ts';
import { Maybe, Partial } from './wire-schema.ts';

/**
 * One image of an OpenAI-shaped images answer (OpenAI Images, and the GPU pool's OpenAI-like API):
 * base64 or a URL, and the prompt as the model rewrote it.
 */
export const ImageDatumSchema = Partial({ b64_json: Maybe(Type.String()), url: Maybe(Type.String()), revised_prompt: Maybe(Type.String()) });
export type ImageDatumWire = Static<typeof ImageDatumSchema>;

/**
 * An image as received: its bytes, and the base64 text they came in when that text is their
 * standard encoding (GeneratedImage.base64: an answer forwards it rather than encoding again).
 */
export interface ReceivedImage {
  readonly data: Uint8Array;
  readonly base64?: string | Uint8Array;
}

/** The member of a datum whose value an answer's JSON may leave to its bytes (postJson's `lift`). */
export const LIFTED_IMAGE_MEMBERS = ['b64_json'] as const;

/**
 * An image's bytes: its base64 decoded, or its URL downloaded; neither is a malformed answer.
 * `lifted`: the raw text of a `b64_json` left out of the parse (postJson's `lift`).
 */
export async function imageOfDatum(datum: ImageDatumWire, download: JsonCallOptions, lifted?: (text: string) => Buffer | undefined): Promise<ReceivedImage> {
  if (datum.b64_json != null) return base64Image(lifted?.(datum.b64_json) ?? datum.b64_json);
  if (datum.url != null) return { data: await downloadedImage(datum.url, download) };
  throw errors.malformedUpstream('an image with neither b64_json nor url');
}

/**
 * The bytes are decoded (and checked) whatever happens next: the text is kept only beside them.
 * `text`: a string, or the raw bytes of one (lifted out of an answer's JSON), read as latin1 for
 * the decoding: any byte outside base64's alphabet fails it. That string lives only while it is
 * decoded; the bytes are what is kept, off the JS heap.
 */
export function base64Image(text: unknown): ReceivedImage {
  const string = Buffer.isBuffer(text) ? text.toString('latin1') : typeof text === 'string' ? text : undefined;
  const decoded = string === undefined ? undefined : strictBase64(string);
  if (!decoded) throw errors.malformedUpstream('an image that is not valid base64');
  return isCanonicalBase64(string!, decoded) ? { data: decoded, base64: text as string | Buffer } : { data: decoded };
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
