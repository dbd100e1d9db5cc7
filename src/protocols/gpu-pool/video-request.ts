/** Video calls → the queue's model input: the duration in seconds, and the `gpu_pool` options by their input names. */
import { pixelSize } from '../../policy/image-family.ts';
import type { VideoCall } from '../video-protocol.ts';
import type { QueueVideoInputWire } from './video-wire.ts';

export function queueVideoInput(call: VideoCall): QueueVideoInputWire {
  const input: QueueVideoInputWire = { prompt: call.request.prompt, duration: call.durationSeconds };
  const options = call.request.providerOptions?.group === 'gpu_pool' ? call.request.providerOptions.options : undefined;
  if (options?.negativePrompt !== undefined) input.negative_prompt = options.negativePrompt;
  if (options?.seed !== undefined) input.seed = options.seed;
  if (options?.numInferenceSteps !== undefined) input.num_inference_steps = options.numInferenceSteps;
  if (options?.frames !== undefined) {
    input.fps = options.frames.fps;
    input.num_frames = options.frames.count;
  }
  const pixels = options?.size === undefined ? undefined : pixelSize(options.size);
  if (pixels) {
    input.width = pixels.width;
    input.height = pixels.height;
  }
  return input;
}

/** The model's path under the base URL: `owner/model[/subpath]`, each segment encoded, the slashes kept. */
export function queueModelPath(upstreamModel: string): string {
  return upstreamModel.split('/').map(encodeURIComponent).join('/');
}
