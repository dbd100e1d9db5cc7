/**
 * The simulated provider's video files: what ffprobe reads in them (codec, profile, size, duration,
 * frame count), that ffmpeg decodes every frame without an error and to the very pictures drawn,
 * determinism, and the option ranges.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { nalUnit } from '../../src/protocols/simulated/bit-writer.ts';
import { codedSize, idrPicture, pictureParameterSet, sequenceParameterSet, type Yuv420Picture } from '../../src/protocols/simulated/h264.ts';
import { mp4File } from '../../src/protocols/simulated/mp4.ts';
import { type SimulatedVideoOptions, simulatedVideo } from '../../src/protocols/simulated/video-file.ts';
import { drawScene, motionAt, sceneOf } from '../../src/protocols/simulated/video-scene.ts';

const run = promisify(execFile);
const ffmpegMissing = ['ffprobe', 'ffmpeg'].some((tool) => spawnSync(tool, ['-version']).status !== 0)
  ? 'ffprobe and ffmpeg are not installed: the file checks need them'
  : false;
const TOOL_LIMITS = { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 };

let directory: string;
before(async () => {
  directory = await mkdtemp(join(tmpdir(), 'simulated-video-'));
});
after(() => rm(directory, { recursive: true, force: true }));

async function written(options: SimulatedVideoOptions): Promise<string> {
  const path = join(directory, `${options.durationSeconds}s-${options.width ?? 'w'}x${options.height ?? 'h'}-${options.fps ?? 'fps'}.mp4`);
  await writeFile(path, simulatedVideo(options).bytes);
  return path;
}

describe('simulated video files as ffprobe and ffmpeg read them', { skip: ffmpegMissing }, () => {
  const cases: SimulatedVideoOptions[] = [
    { prompt: 'a red kite over the sea', durationSeconds: 1 },
    { prompt: 'a lighthouse at night', durationSeconds: 4, width: 320, height: 240, fps: 8 },
    { prompt: 'a slow pan over a city', durationSeconds: 8, width: 1920, height: 1080, fps: 30 },
    { prompt: 'two minutes of rain', durationSeconds: 120 },
    { prompt: 'every frame a key frame', durationSeconds: 3, width: 16, height: 16, fps: 1 },
    { prompt: 'a wide strip', durationSeconds: 2, width: 1920, height: 16, fps: 60 },
    { prompt: 'a tall strip', durationSeconds: 2, width: 18, height: 1920, fps: 25 },
  ];
  for (const options of cases) {
    const fps = options.fps ?? 24;
    const width = options.width ?? 256;
    const height = options.height ?? 144;
    test(`${options.durationSeconds} s, ${width}x${height} at ${fps} fps`, { timeout: 120_000 }, async () => {
      const path = await written(options);
      const probe = await run('ffprobe', ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', path], TOOL_LIMITS);
      assert.equal(probe.stderr, '');
      const { streams, format } = JSON.parse(probe.stdout);
      assert.equal(streams.length, 1);
      const [stream] = streams;
      assert.equal(stream.codec_name, 'h264');
      assert.equal(stream.profile, 'Constrained Baseline');
      assert.equal(stream.pix_fmt, 'yuv420p');
      assert.equal(stream.width, width);
      assert.equal(stream.height, height);
      assert.equal(stream.r_frame_rate, `${fps}/1`);
      assert.equal(Number(stream.nb_frames), fps * options.durationSeconds);
      assert.ok(Math.abs(Number(stream.duration) - options.durationSeconds) < 1 / fps, `stream duration ${stream.duration}`);
      assert.ok(Math.abs(Number(format.duration) - options.durationSeconds) < 1 / fps, `format duration ${format.duration}`);

      const decoded = await run('ffmpeg', ['-v', 'error', '-i', path, '-f', 'null', '-'], TOOL_LIMITS);
      assert.equal(decoded.stderr, '');
    });
  }

  test('the decoded frames are the pictures drawn: each second a new picture, then that picture moved', { timeout: 60_000 }, async () => {
    // A size that is not whole macroblocks, so the cropping is checked too.
    const options = { prompt: 'a checked picture', durationSeconds: 2, width: 200, height: 120, fps: 6, seed: 7 };
    const frames = await decodedLuma(await written(options), options.width, options.height);
    assert.equal(frames.length, options.fps * options.durationSeconds);

    const scene = sceneOf(options.prompt, options.seed, options, options.durationSeconds);
    const picture = blankPicture(options.width, options.height);
    const coded = { width: picture.width, height: picture.height };
    for (let second = 0; second < options.durationSeconds; second++) {
      drawScene(scene, scene.positions[second], picture);
      for (let frame = 0; frame < options.fps; frame++) {
        const motion = motionAt(scene, second, frame);
        const expected = new Uint8Array(options.width * options.height);
        for (let y = 0; y < options.height; y++) {
          // A motion vector that points outside the picture reads its nearest edge sample (H.264 § 8.4.2.2.1).
          const from = Math.min(Math.max(y + motion.y, 0), coded.height - 1) * coded.width;
          for (let x = 0; x < options.width; x++) expected[y * options.width + x] = picture.y[from + Math.min(Math.max(x + motion.x, 0), coded.width - 1)];
        }
        assert.deepEqual(frames[second * options.fps + frame], expected, `second ${second}, frame ${frame}`);
      }
    }
    assert.notDeepEqual(frames[0], frames[1], 'the picture moves');
    assert.notDeepEqual(frames[0], frames[options.fps], 'the next second starts from a new picture');
  });

  test('an IDR picture decodes to exactly its samples, whether a macroblock is stored or predicted from a neighbour', async () => {
    // 4 × 3 macroblocks, cropped to 56 × 40. Each macroblock is noise (stored as I_PCM), or repeats
    // the column left of it or the row above it (predicted), in raster order so each copies final samples.
    const width = 56;
    const height = 40;
    const picture = blankPicture(width, height);
    const kinds = ['noise', 'left', 'left', 'noise', 'above', 'noise', 'above', 'left', 'noise', 'above', 'left', 'above'];
    let state = 12345;
    const noise = () => 16 + (((state = (state * 1103515245 + 12345) >>> 0) >>> 16) % 220);
    const planes = [
      { plane: picture.y, stride: picture.width, size: 16 },
      { plane: picture.cb, stride: picture.width / 2, size: 8 },
      { plane: picture.cr, stride: picture.width / 2, size: 8 },
    ];
    kinds.forEach((kind, mb) => {
      const mbX = mb % 4;
      const mbY = Math.floor(mb / 4);
      for (const { plane, stride, size } of planes) {
        for (let y = mbY * size; y < (mbY + 1) * size; y++) {
          for (let x = mbX * size; x < (mbX + 1) * size; x++) {
            plane[y * stride + x] = kind === 'noise' ? noise() : kind === 'left' ? plane[y * stride + mbX * size - 1] : plane[(mbY * size - 1) * stride + x];
          }
        }
      }
    });
    const idr = idrPicture(picture, 0);
    const stored = kinds.filter((kind) => kind === 'noise').length;
    assert.ok(idr.length < (stored + 1) * 386, `only the ${stored} noise macroblocks are stored (${idr.length} bytes)`);

    const format = { width, height, fps: 1 };
    const path = join(directory, 'idr.mp4');
    await writeFile(path, mp4File({ ...format, sps: sequenceParameterSet(format, 10), pps: pictureParameterSet(), samples: [idr], syncSamples: [0] }));
    const [frame] = await decodedFrames(path, width, height);
    const chroma = (width / 2) * (height / 2);
    assert.deepEqual(frame.subarray(0, width * height), cropped(picture.y, picture.width, width, height));
    assert.deepEqual(frame.subarray(width * height, width * height + chroma), cropped(picture.cb, picture.width / 2, width / 2, height / 2));
    assert.deepEqual(frame.subarray(width * height + chroma), cropped(picture.cr, picture.width / 2, width / 2, height / 2));
  });
});

describe('NAL units', () => {
  test('an emulation prevention byte goes before each byte ≤ 3 that follows two zero bytes', () => {
    const cases: [number[], number[]][] = [
      [
        [1, 2, 3],
        [1, 2, 3],
      ],
      [
        [0, 0, 4],
        [0, 0, 4],
      ],
      [
        [0, 0, 1],
        [0, 0, 3, 1],
      ],
      [
        [0, 0, 3, 0],
        [0, 0, 3, 3, 0],
      ],
      [
        [0, 0, 0, 0, 1],
        [0, 0, 3, 0, 0, 3, 1],
      ],
      [
        [5, 0, 0, 2, 0, 0, 0x80],
        [5, 0, 0, 3, 2, 0, 0, 0x80],
      ],
      [
        [0, 1, 0, 0, 0, 7],
        [0, 1, 0, 0, 3, 0, 7],
      ],
    ];
    for (const [rbsp, payload] of cases) {
      assert.deepEqual([...nalUnit(3, 5, Uint8Array.from(rbsp))], [0x65, ...payload], JSON.stringify(rbsp));
    }
  });
});

/** Every frame as ffmpeg decodes it: the Y, Cb and Cr planes one after the other. */
async function decodedFrames(path: string, width: number, height: number): Promise<Uint8Array[]> {
  const { stdout } = await run('ffmpeg', ['-v', 'error', '-i', path, '-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-'], { ...TOOL_LIMITS, encoding: 'buffer' });
  const frameSize = width * height * 1.5;
  assert.equal(stdout.length % frameSize, 0);
  return Array.from({ length: stdout.length / frameSize }, (_, index) => new Uint8Array(stdout.subarray(index * frameSize, (index + 1) * frameSize)));
}

async function decodedLuma(path: string, width: number, height: number): Promise<Uint8Array[]> {
  return (await decodedFrames(path, width, height)).map((frame) => frame.subarray(0, width * height));
}

function blankPicture(width: number, height: number): Yuv420Picture {
  const coded = codedSize(width, height);
  const samples = coded.width * coded.height;
  return { ...coded, y: new Uint8Array(samples), cb: new Uint8Array(samples / 4), cr: new Uint8Array(samples / 4) };
}

/** The top-left `width` × `height` of a plane `stride` samples wide. */
function cropped(plane: Uint8Array, stride: number, width: number, height: number): Uint8Array {
  const out = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) out.set(plane.subarray(y * stride, y * stride + width), y * width);
  return out;
}

describe('simulated video files', () => {
  test('the same prompt and options give the same bytes', () => {
    const options = { prompt: 'a paper boat', durationSeconds: 3, seed: 42 };
    assert.deepEqual(simulatedVideo(options).bytes, simulatedVideo(options).bytes);
  });

  test('another prompt or seed gives another video', () => {
    const base = simulatedVideo({ prompt: 'a paper boat', durationSeconds: 2 }).bytes;
    assert.notDeepEqual(simulatedVideo({ prompt: 'a paper plane', durationSeconds: 2 }).bytes, base);
    assert.notDeepEqual(simulatedVideo({ prompt: 'a paper boat', durationSeconds: 2, seed: 1 }).bytes, base);
  });

  test('describes what it made, with the defaults filled in', () => {
    const video = simulatedVideo({ prompt: 'a paper boat', durationSeconds: 5 });
    assert.deepEqual({ ...video, bytes: undefined }, { bytes: undefined, contentType: 'video/mp4', width: 256, height: 144, fps: 24, durationSeconds: 5 });
    // An MP4 that starts with its movie box: ftyp, then moov before mdat.
    assert.equal(new TextDecoder().decode(video.bytes.subarray(4, 8)), 'ftyp');
    const ftypSize = new DataView(video.bytes.buffer, video.bytes.byteOffset).getUint32(0);
    assert.equal(new TextDecoder().decode(video.bytes.subarray(ftypSize + 4, ftypSize + 8)), 'moov');
  });

  test('refuses values outside the documented ranges instead of rounding them', () => {
    const refused: Partial<SimulatedVideoOptions>[] = [
      { durationSeconds: 0 },
      { durationSeconds: 121 },
      { durationSeconds: 2.5 },
      { width: 14 },
      { width: 1922 },
      { width: 255 },
      { height: 143 },
      { fps: 0 },
      { fps: 61 },
      { fps: 23.976 },
    ];
    for (const change of refused) {
      assert.throws(() => simulatedVideo({ prompt: 'x', durationSeconds: 1, ...change }), RangeError, JSON.stringify(change));
    }
  });
});
