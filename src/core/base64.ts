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
