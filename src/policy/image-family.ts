/**
 * Image model families: what each image wire format can express. The catalog says what a route
 * approves (`limits.supported_sizes`, `limits.supported_qualities`, `parameters`); the family says
 * what its protocol can send at all, so that a request it could not express is refused with 400
 * `unsupported_parameter` before any credit moves, never silently dropped (docs/images.md).
 *
 * - OpenAI Images (and the simulated provider, which imitates it): `quality` takes aliases
 *   (`standard` → `medium`, `hd` → `high`) and an omitted quality means `medium`
 *   (https://platform.openai.com/docs/api-reference/images/create).
 * - Imagen `:predict`: no quality parameter; sizes travel as aspect ratios, and its edits take the
 *   source image's shape, so an explicit size on an edit is refused
 *   (https://ai.google.dev/gemini-api/docs/imagen).
 * - Diffusion GPU pools: no quality, no masks and no end-user id, but steps, guidance, seed and
 *   negative prompt (https://docs.together.ai/reference/post-images-generations).
 * - Imagen has no end-user id either.
 */
import type { ImageQuality } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';

export interface ImageFamily {
  /** `aliased`: the OpenAI values and aliases; `rejected`: the wire has no quality parameter. */
  readonly quality: 'aliased' | 'rejected';
  /** Whether an edit may name an output size. */
  readonly editSize: boolean;
  /** Whether an edit may carry a mask. */
  readonly mask: boolean;
  /** Whether the `extra_body.gpu_pool` options can be sent. */
  readonly gpuPool: boolean;
  /** Whether the end-user id (`user`) can be sent. */
  readonly user: boolean;
  /** When set, sizes travel as these aspect ratios (`W:H`), and a size must map to one of them. */
  readonly aspectRatios?: readonly string[];
}

/** The `standard`/`hd` aliases of the aliased family. */
const QUALITY_ALIASES: Readonly<Partial<Record<ImageQuality, ImageQuality>>> = { standard: 'medium', hd: 'high' };
const DEFAULT_QUALITY: ImageQuality = 'medium';

/**
 * The quality a route is asked for: the family's alias of the requested value (unless the route
 * lists the value itself, as a model that takes `standard` natively does), or the family's default
 * when none was requested and the route takes it. Undefined: the provider's own default.
 */
export function resolveImageQuality(family: ImageFamily, requested: ImageQuality | undefined, endpoint: RouteEndpoint): ImageQuality | undefined {
  if (family.quality === 'rejected') return undefined;
  const supported = endpoint.limits.supported_qualities;
  if (requested === undefined) return supported === undefined || supported.includes(DEFAULT_QUALITY) ? DEFAULT_QUALITY : undefined;
  if (supported?.includes(requested)) return requested;
  return QUALITY_ALIASES[requested] ?? requested;
}

/** `<W>x<H>` as numbers, or undefined for `auto`. */
export function pixelSize(size: string): { readonly width: number; readonly height: number } | undefined {
  const match = /^(\d+)x(\d+)$/.exec(size);
  return match ? { width: Number(match[1]), height: Number(match[2]) } : undefined;
}

/** How far a size's shape may be from an aspect ratio and still stand for it (1408x768 is 16:9). */
const ASPECT_TOLERANCE = 0.05;

/** The family's aspect ratio nearest to a `<W>x<H>` size, or undefined when none is close enough. */
export function aspectRatioOf(size: string, ratios: readonly string[]): string | undefined {
  const pixels = pixelSize(size);
  if (!pixels) return undefined;
  const shape = pixels.width / pixels.height;
  let best: { ratio: string; distance: number } | undefined;
  for (const ratio of ratios) {
    const [width, height] = ratio.split(':').map(Number);
    const distance = Math.abs(Math.log(shape / (width / height)));
    if (!best || distance < best.distance) best = { ratio, distance };
  }
  return best && best.distance <= ASPECT_TOLERANCE ? best.ratio : undefined;
}
