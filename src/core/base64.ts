/**
 * Strict base64 decoding without a regular expression over the whole text (a pass of a regex over
 * megabytes of image data cost more than the decoding itself). Node's decoder skips characters
 * outside the alphabet and stops at padding, so a text that decodes to fewer bytes than its length
 * promises held something else. The URL-safe alphabet (`-`, `_`) decodes the same and is accepted.
 */
export function strictBase64(text: string): Uint8Array | undefined {
  if (text.length % 4 !== 0) return undefined;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const decoded = Buffer.from(text, 'base64');
  return decoded.length === (text.length / 4) * 3 - padding ? decoded : undefined;
}

/**
 * Whether `text`, which `strictBase64` decoded to `bytes`, is exactly the standard encoding of
 * those bytes, so that an answer can carry it as received instead of encoding the bytes again
 * (a pass over the whole image and a copy of it). It is unless it uses the URL-safe alphabet or
 * its last group has spare bits set (both decode to the same bytes); the rest of the text was
 * checked by the decoding, which every character took part in.
 */
export function isCanonicalBase64(text: string, bytes: Uint8Array): boolean {
  if (bytes.byteLength === 0) return text.length === 0;
  if (text.includes('-') || text.includes('_')) return false;
  const last = bytes.byteLength % 3 === 0 ? 3 : bytes.byteLength % 3;
  return text.endsWith(Buffer.from(bytes.buffer, bytes.byteOffset + bytes.byteLength - last, last).toString('base64'));
}
