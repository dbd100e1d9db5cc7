/**
 * The file a video simulator delivers: deterministic bytes for (prompt, seconds), so that a test
 * can tell which generation a download belongs to and compare it byte for byte. It starts like an
 * MP4 (an `ftyp` box) and grows with the duration; it is not a playable video.
 */
import { createHash } from 'node:crypto';

const BYTES_PER_SECOND = 2048;

export function videoBytes(prompt: string, seconds: number): Buffer {
  const ftyp = Buffer.from([0, 0, 0, 16, ...Buffer.from('ftypisom'), 0, 0, 2, 0]);
  const blocks: Buffer[] = [ftyp];
  const length = Math.max(1, Math.round(seconds * BYTES_PER_SECOND));
  for (let block = 0; block * 32 < length; block++) blocks.push(createHash('sha256').update(`${prompt}\n${seconds}\n${block}`).digest());
  return Buffer.concat(blocks).subarray(0, ftyp.length + length);
}
