/**
 * Whether a PNG file is whole and honest, checked in bounded memory and time: every chunk's CRC
 * (https://www.w3.org/TR/png-3/#5CRC-algorithm), the header's dimensions, and image data that
 * inflates to exactly the size its header declares. The inflation is streamed on zlib's thread pool
 * and counted as it goes, so a "decompression bomb" (a 1×1 picture whose data inflates to a
 * gigabyte) is refused after its first output window, and no picture is ever held inflated.
 *
 * The chunk walk is written here, not taken from a decoder, because decoders (fast-png, pngjs)
 * inflate the whole picture into memory before anything is checked.
 */
import { createInflate, crc32 } from 'node:zlib';

export interface PngHeader {
  readonly width: number;
  readonly height: number;
}

/** Why a PNG is refused: `bomb` when its data inflates past the declared size, else `invalid`. */
export class PngRefused extends Error {
  override readonly name = 'PngRefused';
  readonly bomb: boolean;

  constructor(reason: string, bomb = false) {
    super(reason);
    this.bomb = bomb;
  }
}

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Samples per pixel of each colour type, and the bit depths it allows (PNG spec, table 11.1). */
const COLOR_TYPES: ReadonlyMap<number, { readonly channels: number; readonly depths: readonly number[] }> = new Map([
  [0, { channels: 1, depths: [1, 2, 4, 8, 16] }],
  [2, { channels: 3, depths: [8, 16] }],
  [3, { channels: 1, depths: [1, 2, 4, 8] }],
  [4, { channels: 2, depths: [8, 16] }],
  [6, { channels: 4, depths: [8, 16] }],
]);

/** Adam7 passes: x and y start and step (PNG spec, 8.2). */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

interface Layout extends PngHeader {
  readonly bitsPerPixel: number;
  readonly interlaced: boolean;
}

/** Checks `data` (an exact copy of the upload); resolves with its header or rejects with PngRefused. */
export async function checkPng(data: Uint8Array, maxSide: number): Promise<PngHeader> {
  const { layout, idat } = walkChunks(data, maxSide);
  await inflateExactly(idat, rawSize(layout));
  return { width: layout.width, height: layout.height };
}

function walkChunks(data: Uint8Array, maxSide: number): { layout: Layout; idat: Uint8Array[] } {
  if (data.length < SIGNATURE.length || SIGNATURE.some((byte, index) => data[index] !== byte)) throw new PngRefused('no PNG signature');
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let offset = SIGNATURE.length;
  let layout: Layout | undefined;
  const idat: Uint8Array[] = [];
  let idatEnded = false;
  while (true) {
    if (offset + 12 > data.length) throw new PngRefused('a chunk is cut short');
    const length = view.getUint32(offset);
    const type = String.fromCharCode(...data.subarray(offset + 4, offset + 8));
    const end = offset + 12 + length;
    if (length > 0x7fff_ffff || end > data.length) throw new PngRefused(`the ${type} chunk is cut short`);
    const body = data.subarray(offset + 8, offset + 8 + length);
    if (crc32(data.subarray(offset + 4, offset + 8 + length)) !== view.getUint32(offset + 8 + length)) throw new PngRefused(`the ${type} chunk's CRC is wrong`);
    if (layout === undefined) {
      if (type !== 'IHDR') throw new PngRefused('the first chunk is not IHDR');
      layout = readHeader(body, maxSide);
    } else if (type === 'IDAT') {
      if (idatEnded) throw new PngRefused('the IDAT chunks are not consecutive');
      idat.push(body);
    } else if (type === 'IEND') {
      if (idat.length === 0) throw new PngRefused('no IDAT chunk');
      return { layout, idat };
    } else {
      if (type === 'IHDR') throw new PngRefused('a second IHDR chunk');
      if (idat.length > 0) idatEnded = true;
    }
    offset = end;
  }
}

function readHeader(body: Uint8Array, maxSide: number): Layout {
  if (body.length !== 13) throw new PngRefused('the IHDR chunk has the wrong length');
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const width = view.getUint32(0);
  const height = view.getUint32(4);
  const [depth, colorType, compression, filter, interlace] = body.subarray(8, 13);
  const color = COLOR_TYPES.get(colorType);
  if (width === 0 || height === 0) throw new PngRefused('a side of zero pixels');
  if (width > maxSide || height > maxSide) throw new PngRefused(`${width}x${height} pixels`);
  if (!color?.depths.includes(depth) || compression !== 0 || filter !== 0 || interlace > 1)
    throw new PngRefused('an IHDR chunk with values PNG does not define');
  return { width, height, bitsPerPixel: color.channels * depth, interlaced: interlace === 1 };
}

/** The inflated size of the image data: per row, a filter byte and the row's packed pixels. */
function rawSize(layout: Layout): number {
  const rows = (width: number, height: number) => (width === 0 ? 0 : height * (1 + Math.ceil((width * layout.bitsPerPixel) / 8)));
  if (!layout.interlaced) return rows(layout.width, layout.height);
  let total = 0;
  for (const [x, y, stepX, stepY] of ADAM7) {
    total += rows(Math.ceil((layout.width - x) / stepX), Math.ceil((layout.height - y) / stepY));
  }
  return total;
}

/** Inflates the IDAT stream without keeping it, refusing it as soon as it passes `expected` bytes. */
function inflateExactly(idat: readonly Uint8Array[], expected: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const inflate = createInflate();
    let produced = 0;
    let settled = false;
    const fail = (error: PngRefused) => {
      if (settled) return;
      settled = true;
      inflate.destroy();
      reject(error);
    };
    inflate.on('data', (chunk: Buffer) => {
      produced += chunk.length;
      if (produced > expected) fail(new PngRefused(`its image data inflates to more than the ${expected} bytes its header declares`, true));
    });
    inflate.on('error', () => fail(new PngRefused('its image data is not valid zlib data')));
    inflate.on('end', () => {
      if (settled) return;
      settled = true;
      if (produced === expected) resolve();
      else reject(new PngRefused(`its image data inflates to ${produced} bytes, not the ${expected} its header declares`));
    });
    for (const chunk of idat) inflate.write(chunk);
    inflate.end();
  });
}
