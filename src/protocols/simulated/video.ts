/**
 * The simulated provider's video: a real, playable MP4 of the requested duration, drawn
 * deterministically from the prompt and options (./video-file.ts), so that `npm start` can make a
 * video out of the box. Its operations are stateless: the operation handle carries the request and
 * the time it is ready (`simulated.video_delay_ms` after its start), so an operation survives a
 * restart of the gateway like a real provider's. Takes the `gpu_pool` group's size, frames and seed.
 */
import { createHash } from 'node:crypto';
import type { GpuPoolVideoOptions, VideoOperation } from '../../canonical/index.ts';
import { pixelSize } from '../../policy/image-family.ts';
import { RejectedParameter } from '../../policy/violation.ts';
import type { VideoProtocol } from '../video-protocol.ts';
import { simulatedVideo } from './video-file.ts';

/** Long enough that a client sees `processing` at least once, short enough for a demo. */
const DEFAULT_VIDEO_DELAY_MS = 2_000;

/** A side the generator draws (./video-file.ts): even, 16 to 1920 pixels. */
function drawable(side: number): boolean {
  return side >= 16 && side <= 1920 && side % 2 === 0;
}

interface SimulatedOperation extends VideoOperation {
  readonly prompt: string;
  readonly seconds: number;
  readonly readyAt: number;
  readonly width?: number;
  readonly height?: number;
  readonly fps?: number;
  readonly seed?: number;
}

export const simulatedVideoProtocol: VideoProtocol = {
  optionGroup: 'gpu_pool',
  async start(call, endpoint, context) {
    context.signal.throwIfAborted();
    const options: GpuPoolVideoOptions | undefined = call.request.providerOptions?.group === 'gpu_pool' ? call.request.providerOptions.options : undefined;
    const size = options?.size === undefined ? undefined : pixelSize(options.size);
    if (size && ![size.width, size.height].every(drawable)) {
      throw new RejectedParameter({
        ref: { kind: 'extra-body', path: 'gpu_pool.size' },
        code: 'invalid_value',
        message: (param) => `'${param}' must have even sides of 16 to 1920 pixels on the simulated provider.`,
      });
    }
    const operation: Omit<SimulatedOperation, 'id'> = {
      prompt: call.request.prompt,
      seconds: call.durationSeconds,
      readyAt: Date.now() + (endpoint.provider.simulated?.video_delay_ms ?? DEFAULT_VIDEO_DELAY_MS),
      ...(size ? { width: size.width, height: size.height } : {}),
      ...(options?.frames ? { fps: options.frames.fps } : {}),
      ...(options?.seed === undefined ? {} : { seed: options.seed }),
    };
    const id = `simop_${createHash('sha256').update(JSON.stringify(operation)).digest('hex').slice(0, 24)}`;
    return { id, ...operation };
  },
  async poll(operation, _endpoint, context) {
    context.signal.throwIfAborted();
    const op = operation as SimulatedOperation;
    if (Date.now() < op.readyAt) return { status: 'running' };
    return {
      status: 'succeeded',
      video: {
        contentType: 'video/mp4',
        durationSeconds: op.seconds,
        fetch: async () =>
          simulatedVideo({ prompt: op.prompt, durationSeconds: op.seconds, width: op.width, height: op.height, fps: op.fps, seed: op.seed }).bytes,
      },
    };
  },
};
