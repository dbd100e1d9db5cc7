/**
 * The simulated provider's videos: real MP4 files (H.264 Constrained Baseline, 4:2:0, `moov`
 * first) that ffprobe reads and browsers play, of exactly the requested duration, drawn from the
 * prompt (src/protocols/simulated/video-scene.ts) so that the same request always gets the same
 * bytes. Cheap to make: one picture a second is drawn and coded, every other frame is that picture
 * moved (src/protocols/simulated/h264.ts). A picture stores about one 384-byte macroblock per
 * cell of its mosaic and predicts the rest; a moved frame costs five bits a macroblock.
 */
import { codedSize, idrPicture, levelFor, movedPicture, pictureParameterSet, sequenceParameterSet, type Yuv420Picture } from './h264.ts';
import { mp4File } from './mp4.ts';
import { drawScene, motionAt, sceneOf } from './video-scene.ts';

export interface SimulatedVideoOptions {
  readonly prompt: string;
  /** Whole seconds, 1 to 120. */
  readonly durationSeconds: number;
  /** Even whole numbers of pixels, 16 to 1920 each (4:2:0 video halves both for colour). Default 256 × 144. */
  readonly width?: number;
  readonly height?: number;
  /** Whole frames a second, 1 to 60. Default 24. */
  readonly fps?: number;
  /** Another seed gives another video for the same prompt. */
  readonly seed?: number;
}

export interface SimulatedVideo {
  readonly bytes: Uint8Array;
  readonly contentType: 'video/mp4';
  readonly width: number;
  readonly height: number;
  readonly fps: number;
  readonly durationSeconds: number;
}

export const SIMULATED_VIDEO_DEFAULTS = { width: 256, height: 144, fps: 24 } as const;

/** Throws a RangeError, naming the option, for a value outside the documented ranges (nothing is rounded). */
export function simulatedVideo(options: SimulatedVideoOptions): SimulatedVideo {
  const seconds = checked('durationSeconds', options.durationSeconds, 1, 120);
  const width = checkedEven('width', options.width ?? SIMULATED_VIDEO_DEFAULTS.width);
  const height = checkedEven('height', options.height ?? SIMULATED_VIDEO_DEFAULTS.height);
  const fps = checked('fps', options.fps ?? SIMULATED_VIDEO_DEFAULTS.fps, 1, 60);
  const format = { width, height, fps };
  const scene = sceneOf(options.prompt, options.seed, format, seconds);

  const coded = codedSize(width, height);
  const picture: Yuv420Picture = {
    ...coded,
    y: new Uint8Array(coded.width * coded.height),
    cb: new Uint8Array((coded.width * coded.height) / 4),
    cr: new Uint8Array((coded.width * coded.height) / 4),
  };
  const samples: Uint8Array[] = [];
  const syncSamples: number[] = [];
  let peakBitsPerSecond = 0;
  for (let second = 0; second < seconds; second++) {
    drawScene(scene, scene.positions[second], picture);
    syncSamples.push(samples.length);
    samples.push(idrPicture(picture, second % 2));
    let bits = 8 * samples[samples.length - 1].length;
    for (let frame = 1; frame < fps; frame++) {
      samples.push(movedPicture(coded.width, coded.height, frame, motionAt(scene, second, frame)));
      bits += 8 * samples[samples.length - 1].length;
    }
    peakBitsPerSecond = Math.max(peakBitsPerSecond, bits);
  }
  const level = levelFor(format, peakBitsPerSecond);
  const bytes = mp4File({ width, height, fps, sps: sequenceParameterSet(format, level), pps: pictureParameterSet(), samples, syncSamples });
  return { bytes, contentType: 'video/mp4', width, height, fps, durationSeconds: seconds };
}

function checked(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new RangeError(`${name} must be a whole number from ${min} to ${max}, not ${value}`);
  return value;
}

function checkedEven(name: string, value: number): number {
  checked(name, value, 16, 1920);
  if (value % 2 !== 0) throw new RangeError(`${name} must be even (4:2:0 video), not ${value}`);
  return value;
}
