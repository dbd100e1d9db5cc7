/**
 * Whether one route can serve a video request as asked (docs/video.md, "Rules"), and the duration
 * it will be asked for. Every rejection is a 400 naming the client's field, before any credit
 * moves. The rules are catalog data of each route:
 * - the duration: `limits.supported_durations` and `limits.max_duration_seconds` bound an explicit
 *   one; `video.explicit_duration: false` refuses any; `video.default_duration_seconds` fills an
 *   omitted one; a pricing variant's `meta.supported_durations` narrows them for that variant;
 * - `pricingVariant`: a key of the route's `pricing.variants`; a route without `per_second` needs one;
 * - `extra_body`: only the group of the route's protocol (`cloud_a`, `gpu_pool`); every `gpu_pool`
 *   key needs the route's approval (`parameters.video["extra_body.gpu_pool.<key>"]`), and any
 *   constraint listed there applies, to `cloud_a` keys too.
 */
import type { CanonicalVideoRequest, VideoOptionGroup } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import type { ParameterConstraintConfig } from '../config/schema.ts';
import { constraintViolation } from './constraints.ts';
import { notSupported, videoFieldRef, type ParamRef, type PolicyViolation } from './violation.ts';

/** The duration used when neither the request nor the route says (the common default of video families). */
const FALLBACK_DEFAULT_SECONDS = 8;

/** Each group's options as `[wire key, value]`, in the API's names (`extra_body.<group>.<key>`). */
export function videoOptionEntries(request: CanonicalVideoRequest): readonly (readonly [string, unknown])[] {
  const options = request.providerOptions;
  if (!options) return [];
  if (options.group === 'cloud_a') {
    const { negativePrompt, seed, enhancePrompt } = options.options;
    return defined([
      ['negativePrompt', negativePrompt],
      ['seed', seed],
      ['enhancePrompt', enhancePrompt],
    ]);
  }
  const { size, frames, numInferenceSteps, seed, negativePrompt } = options.options;
  return defined([
    ['size', size],
    ['fps', frames?.fps],
    ['num_frames', frames?.count],
    ['num_inference_steps', numInferenceSteps],
    ['seed', seed],
    ['negative_prompt', negativePrompt],
  ]);
}

function defined(entries: readonly (readonly [string, unknown])[]): readonly (readonly [string, unknown])[] {
  return entries.filter(([, value]) => value !== undefined);
}

/** Seconds a `gpu_pool` frame count and rate make (rounded up to whole seconds); undefined without them. */
export function framesSeconds(request: CanonicalVideoRequest): number | undefined {
  const options = request.providerOptions;
  const frames = options?.group === 'gpu_pool' ? options.options.frames : undefined;
  return frames ? Math.ceil(frames.count / frames.fps) : undefined;
}

/** The seconds of video this route is asked for: the request's duration (or frames), else the route's default. */
export function videoDuration(request: CanonicalVideoRequest, endpoint: RouteEndpoint): number {
  const asked = request.duration ?? framesSeconds(request);
  if (asked !== undefined) return asked;
  const { defaultDurationSeconds } = endpoint.video;
  if (defaultDurationSeconds !== undefined) return defaultDurationSeconds;
  const supported = endpoint.limits.supported_durations;
  if (supported && supported.length > 0) return Math.max(...supported);
  return Math.min(FALLBACK_DEFAULT_SECONDS, endpoint.limits.max_duration_seconds || FALLBACK_DEFAULT_SECONDS);
}

/** The price per second the request is billed at on this route, or undefined when the route has none for it. */
export function videoSecondPrice(request: CanonicalVideoRequest, endpoint: RouteEndpoint): bigint | undefined {
  const { prices } = endpoint;
  return request.pricingVariant === undefined ? prices.perSecond : prices.variants.get(request.pricingVariant);
}

export function checkVideoRoute(request: CanonicalVideoRequest, endpoint: RouteEndpoint, optionGroup: VideoOptionGroup | null): PolicyViolation | undefined {
  if (endpoint.capabilities.video_generation === false) return notSupported(videoFieldRef('prompt'), 'cannot be used: this model does not generate video');
  const constraints = endpoint.parameters.video ?? {};
  return (
    checkVariant(request, endpoint) ??
    checkDuration(request, endpoint, constraints) ??
    checkOptions(request, optionGroup, constraints) ??
    checkConstraint(videoFieldRef('user'), request.user, constraints.user)
  );
}

type Constraints = Readonly<Record<string, ParameterConstraintConfig>>;

function checkConstraint(ref: ParamRef, value: unknown, constraint: ParameterConstraintConfig | undefined): PolicyViolation | undefined {
  if (value === undefined || !constraint) return undefined;
  const why = constraintViolation(constraint, value);
  return why ? notSupported(ref, why) : undefined;
}

function checkVariant(request: CanonicalVideoRequest, endpoint: RouteEndpoint): PolicyViolation | undefined {
  const ref = videoFieldRef('pricingVariant');
  const keys = [...endpoint.prices.variants.keys()];
  if (request.pricingVariant === undefined) {
    if (endpoint.prices.perSecond !== undefined) return undefined;
    return { ref, message: (param) => `'${param}' is required by this model: it is priced per variant (${keys.join(', ') || 'none'}).` };
  }
  if (!endpoint.prices.variants.has(request.pricingVariant)) {
    return notSupported(ref, `= "${request.pricingVariant}" is not a pricing variant of this model (variants: ${keys.join(', ') || 'none'})`);
  }
  return undefined;
}

function checkDuration(request: CanonicalVideoRequest, endpoint: RouteEndpoint, constraints: Constraints): PolicyViolation | undefined {
  const ref = videoFieldRef('duration');
  const fromFrames = framesSeconds(request);
  if (request.duration !== undefined && fromFrames !== undefined && fromFrames !== request.duration) {
    return {
      ref: { kind: 'extra-body', path: 'gpu_pool.num_frames' },
      code: 'invalid_value',
      message: (param) => `'${param}' / fps makes ${fromFrames} s of video, but duration is ${request.duration} s.`,
    };
  }
  if (request.duration !== undefined) {
    if (!endpoint.video.explicitDuration) return notSupported(ref, 'must be omitted on this model: it chooses the duration itself');
    const constrained = checkConstraint(ref, request.duration, constraints.duration);
    if (constrained) return constrained;
  }
  const seconds = videoDuration(request, endpoint);
  // Where the seconds come from the frames, the message names the frames.
  const named: ParamRef = request.duration === undefined && fromFrames !== undefined ? { kind: 'extra-body', path: 'gpu_pool.num_frames' } : ref;
  const max = endpoint.limits.max_duration_seconds;
  if (max !== undefined && seconds > max) return invalid(named, seconds, `at most ${max} s on this model`);
  if (request.duration !== undefined || fromFrames !== undefined) {
    const supported = endpoint.limits.supported_durations;
    if (supported && !supported.includes(seconds)) return invalid(named, seconds, `one of ${list(supported)} s on this model`);
  }
  const variant = request.pricingVariant;
  const forVariant = variant === undefined ? undefined : variantDurations(endpoint, variant);
  if (forVariant && !forVariant.includes(seconds)) {
    return invalid(
      request.duration === undefined && fromFrames === undefined ? videoFieldRef('pricingVariant') : named,
      seconds,
      `one of ${list(forVariant)} s with pricingVariant "${variant}"`,
    );
  }
  return undefined;
}

function invalid(ref: ParamRef, seconds: number, rule: string): PolicyViolation {
  return { ref, code: 'invalid_value', message: (param) => `'${param}' gives ${seconds} s of video; the duration must be ${rule}.` };
}

function list(values: readonly number[]): string {
  return values.length === 0 ? '(none)' : values.join(', ');
}

/** A variant's own durations (`meta.supported_durations`), when it lists them. */
function variantDurations(endpoint: RouteEndpoint, variant: string): readonly number[] | undefined {
  const durations = endpoint.video.variantMeta.get(variant)?.supported_durations;
  return Array.isArray(durations) ? (durations as number[]) : undefined;
}

function checkOptions(request: CanonicalVideoRequest, optionGroup: VideoOptionGroup | null, constraints: Constraints): PolicyViolation | undefined {
  const group = request.providerOptions?.group;
  if (group === undefined) return undefined;
  if (group !== optionGroup) {
    const takes = optionGroup === null ? 'no provider options' : `only extra_body.${optionGroup}`;
    return notSupported({ kind: 'extra-body', path: group }, `is not supported by this model's provider (it takes ${takes})`);
  }
  for (const [key, value] of videoOptionEntries(request)) {
    const ref: ParamRef = { kind: 'extra-body', path: `${group}.${key}` };
    const constraint = constraints[`extra_body.${group}.${key}`];
    if (!constraint) {
      // Diffusion pools run whatever they are sent: each option needs the route's approval.
      if (group === 'gpu_pool') return notSupported(ref, 'is not approved on this model');
      continue;
    }
    const why = constraintViolation(constraint, value);
    if (why) return notSupported(ref, why);
  }
  return undefined;
}
