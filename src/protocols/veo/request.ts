/**
 * Video calls → Veo `:predictLongRunning` bodies: one sample of the call's duration, the `cloud_a`
 * options by their Veo names, and the resolution and aspect ratio of the selected pricing variant
 * (its `meta`), since Veo prices those and takes them as parameters.
 */
import type { VideoCall } from '../video-protocol.ts';
import type { VeoRequestWire } from './wire.ts';

export function veoBody(call: VideoCall): VeoRequestWire {
  const body: VeoRequestWire = { instances: [{ prompt: call.request.prompt }], parameters: { durationSeconds: call.durationSeconds, sampleCount: 1 } };
  const options = call.request.providerOptions?.group === 'cloud_a' ? call.request.providerOptions.options : undefined;
  if (options?.negativePrompt !== undefined) body.parameters.negativePrompt = options.negativePrompt;
  if (options?.seed !== undefined) body.parameters.seed = options.seed;
  if (options?.enhancePrompt !== undefined) body.parameters.enhancePrompt = options.enhancePrompt;
  const resolution = call.variantMeta?.resolution;
  if (typeof resolution === 'string') body.parameters.resolution = resolution;
  const aspectRatio = call.variantMeta?.aspect_ratio;
  if (typeof aspectRatio === 'string') body.parameters.aspectRatio = aspectRatio;
  return body;
}
