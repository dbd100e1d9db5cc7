/**
 * What a simulated video shows, drawn from its prompt and seed alone: a mosaic of coloured cells
 * that scrolls across the frame and turns to a new direction and speed every second. The palette,
 * the cells and every second's motion come from one SHAKE256 output, so two prompts look different
 * and the same prompt always looks the same.
 *
 * The scroll is continuous: each second starts from a freshly drawn picture (an IDR picture) at
 * the position the previous second's motion reached, and the frames within a second are that
 * picture moved (src/protocols/simulated/h264.ts), whole pixels at a time.
 */
import { createHash } from 'node:crypto';
import type { Motion, VideoFormat, Yuv420Picture } from './h264.ts';

export interface Scene {
  readonly fps: number;
  /** The palette as BT.601 limited-range Y, Cb, Cr samples, written twice so an index sum needs no modulo. */
  readonly luma: Uint8Array;
  readonly blue: Uint8Array;
  readonly red: Uint8Array;
  readonly colours: number;
  /** A cell's size in luma samples, whole macroblocks. */
  readonly cellWidth: number;
  readonly cellHeight: number;
  /** How many palette steps each row of cells shifts from the row above. */
  readonly rowShift: number;
  /** Where the pattern is at the start of each second: where the second before it took it. */
  readonly positions: readonly Motion[];
  /** Luma samples a second during each second, whole macroblocks. */
  readonly velocities: readonly Motion[];
}

const COLOURS = 6;

export function sceneOf(prompt: string, seed: number | undefined, format: VideoFormat, seconds: number): Scene {
  const bytesPerSecond = 2;
  const header = 3 * COLOURS + 3;
  const random = createHash('shake256', { outputLength: header + bytesPerSecond * seconds })
    .update(JSON.stringify([prompt, seed ?? null]))
    .digest();
  const luma = new Uint8Array(2 * COLOURS);
  const blue = new Uint8Array(2 * COLOURS);
  const red = new Uint8Array(2 * COLOURS);
  for (let index = 0; index < COLOURS; index++) {
    const [y, cb, cr] = bt601(random[3 * index], random[3 * index + 1], random[3 * index + 2]);
    luma[index] = luma[index + COLOURS] = y;
    blue[index] = blue[index + COLOURS] = cb;
    red[index] = red[index + COLOURS] = cr;
  }
  const shortSide = Math.min(format.width, format.height);
  // Cells and each second's starting position are whole macroblocks, so the encoder predicts
  // every macroblock of a cell but its first from a neighbour instead of storing its samples.
  // A cell is about 3/32 to 8/32 of the shorter side.
  const cellSize = (byte: number) => 16 * Math.max(1, Math.round((shortSide * (3 + (byte % 6))) / 32 / 16));
  // Vertical motion vectors are limited by level (Table A-1: ±64 samples at level 1, up to ±512);
  // a quarter of the shorter side a second (at least a macroblock) stays inside the limit of any
  // level that fits the picture.
  const maxSpeed = 16 * Math.max(1, Math.floor(shortSide / 4 / 16));
  const speed = (byte: number) => 16 * Math.round(((byte - 127.5) / 127.5) * (maxSpeed / 16));
  const velocities: Motion[] = [];
  const positions: Motion[] = [];
  for (let second = 0; second < seconds; second++) {
    const start =
      second === 0 ? { x: 0, y: 0 } : { x: positions[second - 1].x + velocities[second - 1].x, y: positions[second - 1].y + velocities[second - 1].y };
    positions.push(start);
    velocities.push({ x: speed(random[header + 2 * second]), y: speed(random[header + 2 * second + 1]) });
  }
  return {
    fps: format.fps,
    luma,
    blue,
    red,
    colours: COLOURS,
    cellWidth: cellSize(random[3 * COLOURS]),
    cellHeight: cellSize(random[3 * COLOURS + 1]),
    rowShift: 1 + (random[3 * COLOURS + 2] % (COLOURS - 1)),
    positions,
    velocities,
  };
}

/** How far frame `frame` (0 … fps − 1) of `second` has scrolled from that second's first frame. */
export function motionAt(scene: Scene, second: number, frame: number): Motion {
  const velocity = scene.velocities[second];
  return { x: Math.round((velocity.x * frame) / scene.fps), y: Math.round((velocity.y * frame) / scene.fps) };
}

/** Draws the pattern scrolled to `position` over the whole (coded) picture. */
export function drawScene(scene: Scene, position: Motion, picture: Yuv420Picture): void {
  const columns = new Uint8Array(picture.width);
  for (let x = 0; x < picture.width; x++) columns[x] = modulo(Math.floor((x + position.x) / scene.cellWidth), scene.colours);
  const rows = new Uint8Array(picture.height);
  for (let y = 0; y < picture.height; y++) rows[y] = modulo(Math.floor((y + position.y) / scene.cellHeight) * scene.rowShift, scene.colours);
  // A row of samples is drawn once per row of cells, then copied (natively) for the cell's other rows.
  for (let y = 0; y < picture.height; y++) {
    const line = y * picture.width;
    if (y > 0 && rows[y] === rows[y - 1]) {
      picture.y.copyWithin(line, line - picture.width, line);
      continue;
    }
    for (let x = 0; x < picture.width; x++) picture.y[line + x] = scene.luma[columns[x] + rows[y]];
  }
  // 4:2:0: a chroma sample covers 2 × 2 luma samples; take the colour of its top-left one.
  const chromaWidth = picture.width / 2;
  for (let y = 0; y < picture.height / 2; y++) {
    const line = y * chromaWidth;
    if (y > 0 && rows[2 * y] === rows[2 * y - 2]) {
      picture.cb.copyWithin(line, line - chromaWidth, line);
      picture.cr.copyWithin(line, line - chromaWidth, line);
      continue;
    }
    for (let x = 0; x < chromaWidth; x++) {
      const colour = columns[2 * x] + rows[2 * y];
      picture.cb[line + x] = scene.blue[colour];
      picture.cr[line + x] = scene.red[colour];
    }
  }
}

/** RGB to BT.601 limited-range Y'CbCr (Y 16–235, Cb and Cr 16–240), in integers. */
function bt601(r: number, g: number, b: number): [number, number, number] {
  return [16 + ((66 * r + 129 * g + 25 * b + 128) >> 8), 128 + ((-38 * r - 74 * g + 112 * b + 128) >> 8), 128 + ((112 * r - 94 * g - 18 * b + 128) >> 8)];
}

function modulo(value: number, divisor: number): number {
  return ((value % divisor) + divisor) % divisor;
}
