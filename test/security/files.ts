/**
 * Hostile image files for the security tests and the fuzzer, built chunk by chunk: PNGs with any
 * header and any image data (decompression bombs), a bad CRC, and headers cut short.
 */
import { createDeflate, crc32, deflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function pngChunk(type: string, data: Uint8Array, crc?: number): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(crc ?? crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, tail]);
}

/** A PNG of this size (8-bit RGBA unless told) whose IDAT holds `zlibData`. */
export function pngFile(width: number, height: number, zlibData: Uint8Array, options: { colorType?: number; ihdrCrc?: number } = {}): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = options.colorType ?? 6;
  return Buffer.concat([SIGNATURE, pngChunk('IHDR', ihdr, options.ihdrCrc), pngChunk('IDAT', zlibData), pngChunk('IEND', new Uint8Array(0))]);
}

/** A valid, all-black RGBA PNG. */
export function blackPng(width: number, height: number): Buffer {
  return pngFile(width, height, deflateSync(Buffer.alloc(height * (1 + width * 4))));
}

/** A 1×1 PNG whose image data inflates to `inflatedBytes` zeros: a few hundred KiB per 256 MiB. */
export async function pngBomb(inflatedBytes: number): Promise<Buffer> {
  const deflate = createDeflate({ level: 9 });
  const parts: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => parts.push(chunk));
  const ended = new Promise((resolve) => deflate.on('end', resolve));
  const block = Buffer.alloc(1024 * 1024);
  for (let written = 0; written < inflatedBytes; written += block.length) {
    if (!deflate.write(block.subarray(0, Math.min(block.length, inflatedBytes - written)))) await new Promise((resolve) => deflate.once('drain', resolve));
  }
  deflate.end();
  await ended;
  return pngFile(1, 1, Buffer.concat(parts));
}

/** The 16 bytes of a PNG up to its IHDR chunk's type: the width and height would come next. */
export const PNG_CUT_AT_IHDR = Buffer.concat([SIGNATURE, Buffer.from([0, 0, 0, 13]), Buffer.from('IHDR', 'latin1')]);

/** The 24 bytes of a WebP up to its VP8X flags: the canvas size would come next. */
export const WEBP_CUT_AT_VP8X = Buffer.concat([
  Buffer.from('RIFF', 'latin1'),
  Buffer.from([30, 0, 0, 0]),
  Buffer.from('WEBPVP8X', 'latin1'),
  Buffer.from([10, 0, 0, 0]),
  Buffer.from([0, 0, 0, 0]),
]);
