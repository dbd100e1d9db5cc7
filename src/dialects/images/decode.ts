/**
 * Image request bodies → the canonical image request. The schema has checked types and ranges;
 * here are the rules it cannot state: each side of a size within 1..8192, `extra_body` holding only
 * the `gpu_pool` group and its keys (anything else is 400 `unsupported_parameter` naming it), and
 * edit images that really are PNG, JPEG or WebP files, with a mask of the image's size.
 */
import type { CanonicalImageRequest, GpuPoolOptions, ImageQuality } from '../../canonical/index.ts';
import { errors } from '../../core/errors.ts';
import { pixelSize } from '../../policy/image-family.ts';
import { GPU_POOL_WIRE_KEYS } from '../../policy/images.ts';
import type { ParamNamer } from '../../policy/violation.ts';
import { imageFromBase64 } from './image-file.ts';
import { mediaParamNames } from '../media-param-names.ts';
import { MAX_IMAGE_SIDE, type ImageEditBody, type ImageGenerationBody } from './schema.ts';

export interface DecodedImageRequest {
  readonly request: CanonicalImageRequest;
  readonly names: ParamNamer;
}

export function decodeImageGeneration(body: ImageGenerationBody): DecodedImageRequest {
  const gpuPool = decodeExtraBody(body.extra_body);
  return {
    request: {
      operation: 'generate',
      ...sharedFields(body),
      ...(body.quality === undefined ? {} : { quality: body.quality as ImageQuality }),
      ...(gpuPool ? { gpuPool } : {}),
    },
    names: mediaParamNames,
  };
}

/** Async: the files are checked on zlib's thread pool (image-file.ts), never inflated in memory. */
export async function decodeImageEdit(body: ImageEditBody): Promise<DecodedImageRequest> {
  const image = await imageFromBase64('image', body.image);
  const mask = body.mask === undefined ? undefined : await imageFromBase64('mask', body.mask);
  if (mask && (mask.width !== image.width || mask.height !== image.height)) {
    throw errors.invalidValue('mask', `'mask' must have the size of 'image' (${image.width}x${image.height}), not ${mask.width}x${mask.height}.`);
  }
  return {
    request: {
      operation: 'edit',
      ...sharedFields(body),
      image,
      ...(mask ? { mask } : {}),
    },
    names: mediaParamNames,
  };
}

/** The fields generations and edits share, the size checked. Images have no `models` fallback list. */
function sharedFields(body: ImageGenerationBody | ImageEditBody) {
  checkSize(body.size);
  return {
    model: body.model,
    fallbackModels: [],
    stream: false,
    prompt: body.prompt,
    n: body.n ?? 1,
    ...(body.size === undefined ? {} : { size: body.size }),
    responseFormat: body.response_format ?? 'url',
    ...(body.user === undefined ? {} : { user: body.user }),
  } as const;
}

function checkSize(size: string | undefined): void {
  if (size === undefined || size === 'auto') return;
  const pixels = pixelSize(size)!;
  for (const side of [pixels.width, pixels.height]) {
    if (side < 1 || side > MAX_IMAGE_SIDE)
      throw errors.invalidValue('size', `Each side of 'size' must be between 1 and ${MAX_IMAGE_SIDE} pixels; got '${size}'.`);
  }
}

const GPU_POOL_KEYS = new Map(Object.entries(GPU_POOL_WIRE_KEYS).map(([field, wire]) => [wire, field as keyof GpuPoolOptions]));

function decodeExtraBody(extraBody: Record<string, unknown> | undefined): GpuPoolOptions | undefined {
  if (extraBody === undefined) return undefined;
  for (const group of Object.keys(extraBody)) {
    if (group !== 'gpu_pool')
      throw errors.unsupportedParameter(
        `extra_body.${group}`,
        `extra_body.${group} is not supported: the only provider option group of image generation is gpu_pool.`,
      );
  }
  const options = extraBody.gpu_pool as Record<string, unknown> | undefined;
  if (options === undefined) return undefined;
  const decoded: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    const field = GPU_POOL_KEYS.get(key as never);
    if (field === undefined) {
      throw errors.unsupportedParameter(
        `extra_body.gpu_pool.${key}`,
        `extra_body.gpu_pool.${key} is not supported: gpu_pool takes ${[...GPU_POOL_KEYS.keys()].join(', ')}.`,
      );
    }
    decoded[field] = value;
  }
  return Object.keys(decoded).length > 0 ? (decoded as GpuPoolOptions) : undefined;
}
