/**
 * The simulated provider's images: real, valid PNG files drawn deterministically from the prompt,
 * the size and (for an edit) the source image and mask, so that the same request always gets the
 * same bytes and a client can open what it downloads. Imitates the OpenAI Images family (quality
 * aliases, masks, sizes in pixels), and also takes the GPU pool options, whose seed changes the
 * picture.
 */
import { createHash } from 'node:crypto';
import { encode } from 'fast-png';
import type { CanonicalImageRequest, GeneratedImage } from '../../canonical/index.ts';
import type { RouteEndpoint } from '../../catalog/types.ts';
import { pixelSize, resolveImageQuality, type ImageFamily } from '../../policy/image-family.ts';
import type { ImagesProtocol } from '../image-protocol.ts';

export const SIMULATED_IMAGE_FAMILY: ImageFamily = { quality: 'aliased', editSize: true, mask: true, gpuPool: true, user: true };

/** What `auto` or an omitted size draws, as OpenAI's default square. */
const DEFAULT_SIZE = { width: 1024, height: 1024 };

export const simulatedImagesProtocol: ImagesProtocol = {
  family: SIMULATED_IMAGE_FAMILY,
  async complete(request, endpoint, context) {
    context.signal.throwIfAborted();
    const quality = resolveImageQuality(SIMULATED_IMAGE_FAMILY, request.quality, endpoint);
    const pixels = outputSize(request);
    const size = `${pixels.width}x${pixels.height}`;
    const images: GeneratedImage[] = [];
    for (let index = 0; index < request.n; index++) {
      images.push({ data: simulatedPng(seedOf(request, endpoint, index), pixels.width, pixels.height), mediaType: 'image/png' });
    }
    return { images, providerModel: endpoint.upstreamModel, filtered: 0, quality, size };
  },
};

/** The requested size; else an edit keeps its source image's; else the default square. */
function outputSize(request: CanonicalImageRequest): { width: number; height: number } {
  const requested = request.size === undefined ? undefined : pixelSize(request.size);
  if (requested) return requested;
  if (request.image) return { width: request.image.width, height: request.image.height };
  return DEFAULT_SIZE;
}

function seedOf(request: CanonicalImageRequest, endpoint: RouteEndpoint, index: number): Buffer {
  const hash = createHash('sha256').update(`${endpoint.upstreamModel}\n${request.prompt}\n${request.size ?? ''}\n${index}\n${request.gpuPool?.seed ?? ''}`);
  if (request.image) hash.update(request.image.data);
  if (request.mask) hash.update(request.mask.data);
  return hash.digest();
}

/**
 * A PNG of `width` × `height` (indexed colour, one byte a pixel): diagonal bands of a palette drawn
 * from the seed. Rows repeat with a shift, so drawing costs one pass over the pixels.
 */
export function simulatedPng(seed: Uint8Array, width: number, height: number): Uint8Array {
  const colours = 8;
  const palette: [number, number, number][] = [];
  for (let index = 0; index < colours; index++) palette.push([seed[index * 3], seed[index * 3 + 1], seed[(index * 3 + 2) % seed.length]]);
  const band = 8 + (seed[31] % 56);
  const data = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) data[row + x] = Math.floor((x + y) / band) % colours;
  }
  return encode({ width, height, data, depth: 8, channels: 1, palette });
}
