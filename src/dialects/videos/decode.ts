/**
 * The video request body → the canonical video request. The schema has checked types and ranges;
 * here are the rules it cannot state: at most one provider option group, each group holding only
 * its own keys (anything else is 400 `unsupported_parameter` naming it), `fps` and `num_frames`
 * together, and each side of a `gpu_pool.size` within 1..8192.
 */
import type { CanonicalVideoRequest, CloudAVideoOptions, GpuPoolVideoOptions, VideoProviderOptions } from '../../canonical/index.ts';
import { errors } from '../../core/errors.ts';
import { pixelSize } from '../../policy/image-family.ts';
import type { ParamNamer } from '../../policy/violation.ts';
import { MAX_IMAGE_SIDE } from '../images/schema.ts';
import { mediaParamNames } from '../media-param-names.ts';
import type { VideoGenerationBody } from './schema.ts';

export interface DecodedVideoRequest {
  readonly request: CanonicalVideoRequest;
  readonly names: ParamNamer;
}

export function decodeVideoGeneration(body: VideoGenerationBody): DecodedVideoRequest {
  const providerOptions = decodeExtraBody(body.extra_body);
  return {
    request: {
      model: body.model,
      fallbackModels: [],
      stream: false,
      prompt: body.prompt,
      ...(body.duration === undefined ? {} : { duration: body.duration }),
      ...(body.pricingVariant === undefined ? {} : { pricingVariant: body.pricingVariant }),
      ...(providerOptions ? { providerOptions } : {}),
      ...(body.user === undefined ? {} : { user: body.user }),
    },
    names: mediaParamNames,
  };
}

const GROUP_KEYS = {
  cloud_a: ['negativePrompt', 'seed', 'enhancePrompt'],
  gpu_pool: ['size', 'fps', 'num_frames', 'num_inference_steps', 'seed', 'negative_prompt'],
} as const;

type Group = keyof typeof GROUP_KEYS;

function isGroup(name: string): name is Group {
  return Object.hasOwn(GROUP_KEYS, name);
}

function decodeExtraBody(extraBody: Record<string, unknown> | undefined): VideoProviderOptions | undefined {
  if (extraBody === undefined) return undefined;
  let chosen: Group | undefined;
  for (const group of Object.keys(extraBody)) {
    if (!isGroup(group)) {
      throw errors.unsupportedParameter(
        `extra_body.${group}`,
        `extra_body.${group} is not supported: the provider option groups of video are cloud_a and gpu_pool.`,
      );
    }
    if (chosen !== undefined) {
      throw errors.unsupportedParameter(
        `extra_body.${group}`,
        `extra_body.${group} cannot be combined with extra_body.${chosen}: send only the selected provider's group.`,
      );
    }
    chosen = group;
  }
  if (chosen === undefined) return undefined;
  const options = extraBody[chosen] as Record<string, unknown>;
  const known: readonly string[] = GROUP_KEYS[chosen];
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw errors.unsupportedParameter(`extra_body.${chosen}.${key}`, `extra_body.${chosen}.${key} is not supported: ${chosen} takes ${known.join(', ')}.`);
    }
  }
  if (Object.keys(options).length === 0) return undefined;
  return chosen === 'cloud_a' ? { group: chosen, options: options as CloudAVideoOptions } : { group: chosen, options: gpuPoolOptions(options) };
}

function gpuPoolOptions(options: Record<string, unknown>): GpuPoolVideoOptions {
  const {
    size,
    fps,
    num_frames: count,
    num_inference_steps: numInferenceSteps,
    seed,
    negative_prompt: negativePrompt,
  } = options as {
    size?: string;
    fps?: number;
    num_frames?: number;
    num_inference_steps?: number;
    seed?: number;
    negative_prompt?: string;
  };
  if ((fps === undefined) !== (count === undefined)) {
    const missing = fps === undefined ? 'fps' : 'num_frames';
    throw errors.invalidValue(`extra_body.gpu_pool.${missing}`, 'extra_body.gpu_pool.fps and extra_body.gpu_pool.num_frames must be given together.');
  }
  if (size !== undefined) checkSize(size);
  return {
    ...(size === undefined ? {} : { size }),
    ...(fps === undefined || count === undefined ? {} : { frames: { fps, count } }),
    ...(numInferenceSteps === undefined ? {} : { numInferenceSteps }),
    ...(seed === undefined ? {} : { seed }),
    ...(negativePrompt === undefined ? {} : { negativePrompt }),
  };
}

function checkSize(size: string): void {
  const pixels = pixelSize(size)!;
  for (const side of [pixels.width, pixels.height]) {
    if (side < 1 || side > MAX_IMAGE_SIDE) {
      throw errors.invalidValue(
        'extra_body.gpu_pool.size',
        `Each side of 'extra_body.gpu_pool.size' must be between 1 and ${MAX_IMAGE_SIDE} pixels; got '${size}'.`,
      );
    }
  }
}
