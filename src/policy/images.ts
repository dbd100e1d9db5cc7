/**
 * Whether one route can serve an image request as asked (docs/images.md, "Rules"): the route's
 * capabilities and approved values (catalog data), and what its protocol's family can express.
 * Every rejection is a 400 naming the client's field, before any credit moves.
 */
import type { CanonicalImageRequest } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import type { ParameterConstraintConfig } from '../config/schema.ts';
import { aspectRatioOf, resolveImageQuality, type ImageFamily } from './image-family.ts';
import { constraintViolation } from './constraints.ts';
import { imageFieldRef, notSupported, type ParamRef, type PolicyViolation } from './violation.ts';

export function checkImageRoute(request: CanonicalImageRequest, endpoint: RouteEndpoint, family: ImageFamily): PolicyViolation | undefined {
  const editing = request.operation === 'edit';
  const constraints = (editing ? endpoint.parameters['image-edit'] : endpoint.parameters['image-generation']) ?? {};
  const capabilities = endpoint.capabilities;
  if (editing ? capabilities.image_editing !== true : capabilities.image_generation === false) {
    return notSupported(
      imageFieldRef('prompt'),
      editing ? 'cannot be used for an image edit: this model does not edit images' : 'cannot be used: this model does not generate images',
    );
  }
  return (
    checkCount(request, endpoint, constraints) ??
    checkSize(request, endpoint, family, constraints) ??
    checkQuality(request, endpoint, family, constraints) ??
    checkMask(request, endpoint, family) ??
    checkUser(request, family, constraints) ??
    checkConstraint(imageFieldRef('responseFormat'), request.responseFormat, constraints.response_format) ??
    checkGpuPool(request, family, constraints)
  );
}

type Constraints = Readonly<Record<string, ParameterConstraintConfig>>;

function checkConstraint(ref: ParamRef, value: unknown, constraint: ParameterConstraintConfig | undefined): PolicyViolation | undefined {
  if (value === undefined || !constraint) return undefined;
  const why = constraintViolation(constraint, value);
  return why ? notSupported(ref, why) : undefined;
}

function checkCount(request: CanonicalImageRequest, endpoint: RouteEndpoint, constraints: Constraints): PolicyViolation | undefined {
  const max = endpoint.limits.max_images;
  if (max !== undefined && request.n > max) {
    return { ref: imageFieldRef('n'), code: 'invalid_value', message: (param) => `'${param}' must be at most ${max} on this model.` };
  }
  return checkConstraint(imageFieldRef('n'), request.n, constraints.n);
}

function checkSize(request: CanonicalImageRequest, endpoint: RouteEndpoint, family: ImageFamily, constraints: Constraints): PolicyViolation | undefined {
  const size = request.size;
  if (size === undefined) return undefined;
  const ref = imageFieldRef('size');
  if (request.operation === 'edit' && !family.editSize) {
    return notSupported(ref, 'is not supported for edits by this model: an edit keeps the shape of its source image');
  }
  const approved = endpoint.limits.supported_sizes;
  if (approved && !approved.includes(size)) {
    return notSupported(ref, `= "${size}" is not supported by this model (supported sizes: ${approved.join(', ') || 'none'})`);
  }
  const constrained = checkConstraint(ref, size, constraints.size);
  if (constrained) return constrained;
  if (family.aspectRatios && size !== 'auto' && aspectRatioOf(size, family.aspectRatios) === undefined) {
    return notSupported(ref, `= "${size}" has no aspect ratio this model takes (${family.aspectRatios.join(', ')})`);
  }
  return undefined;
}

function checkQuality(request: CanonicalImageRequest, endpoint: RouteEndpoint, family: ImageFamily, constraints: Constraints): PolicyViolation | undefined {
  if (request.quality === undefined) return undefined;
  const ref = imageFieldRef('quality');
  if (family.quality === 'rejected') return notSupported(ref, 'is not supported by this model');
  // Approval applies to the value the route is asked for: `hd` is `high` where the family aliases it.
  const resolved = resolveImageQuality(family, request.quality, endpoint);
  const constrained = checkConstraint(ref, resolved ?? request.quality, constraints.quality);
  if (constrained) return constrained;
  const supported = endpoint.limits.supported_qualities;
  if (supported && resolved !== undefined && !supported.includes(resolved)) {
    return notSupported(ref, `= "${request.quality}" is not supported by this model (supported qualities: ${supported.join(', ') || 'none'})`);
  }
  return undefined;
}

function checkUser(request: CanonicalImageRequest, family: ImageFamily, constraints: Constraints): PolicyViolation | undefined {
  if (request.user !== undefined && !family.user) return notSupported(imageFieldRef('user'), 'is not supported by this model');
  return checkConstraint(imageFieldRef('user'), request.user, constraints.user);
}

function checkMask(request: CanonicalImageRequest, endpoint: RouteEndpoint, family: ImageFamily): PolicyViolation | undefined {
  if (request.mask === undefined) return undefined;
  const ref = imageFieldRef('mask');
  if (endpoint.capabilities.image_mask !== true) return notSupported(ref, 'is not supported by this model (it has no capabilities.image_mask)');
  if (!family.mask) return notSupported(ref, 'is not supported by this model');
  return undefined;
}

/** Each option needs the route's approval (`parameters.<op>.extra_body.gpu_pool.<key>`), within its bounds. */
function checkGpuPool(request: CanonicalImageRequest, family: ImageFamily, constraints: Constraints): PolicyViolation | undefined {
  const options = request.gpuPool;
  if (!options) return undefined;
  for (const [key, value] of Object.entries(GPU_POOL_WIRE_KEYS).map(([field, wire]) => [wire, options[field as keyof typeof options]] as const)) {
    if (value === undefined) continue;
    const ref: ParamRef = { kind: 'extra-body', path: `gpu_pool.${key}` };
    if (!family.gpuPool) return notSupported(ref, 'is not supported by this model');
    const constraint = constraints[`extra_body.gpu_pool.${key}`];
    if (!constraint) return notSupported(ref, 'is not supported by this model');
    const why = constraintViolation(constraint, value);
    if (why) return notSupported(ref, why);
  }
  return undefined;
}

/** The canonical GPU pool options under their API names (`extra_body.gpu_pool.<name>`). */
export const GPU_POOL_WIRE_KEYS = {
  numInferenceSteps: 'num_inference_steps',
  guidanceScale: 'guidance_scale',
  seed: 'seed',
  negativePrompt: 'negative_prompt',
} as const;
