/**
 * The smallest H.264 encoder that makes a real, playable video: Constrained Baseline profile,
 * CAVLC, 4:2:0, one slice a picture, and only two kinds of picture (ITU-T H.264,
 * https://www.itu.int/rec/T-REC-H.264):
 *
 * - an IDR picture of I_PCM macroblocks, which carry their samples as they are (§ 7.3.5): no
 *   transform or entropy coding to get wrong, at 384 bytes a macroblock; a macroblock that only
 *   repeats its neighbour's edge is predicted from it instead, in a dozen bits;
 * - a P picture that shows the last IDR picture moved by one whole-pixel motion vector: every
 *   macroblock is P_L0_16x16 with no residual, about five bits each. P pictures are not reference
 *   pictures (nal_ref_idc 0), so the IDR picture stays the only reference and every P picture
 *   is an exact copy of it, shifted, with nothing accumulating from one frame to the next.
 *
 * Sizes that are not multiples of 16 are coded in whole macroblocks and cropped (frame_cropping).
 */
import { BitWriter, nalUnit } from './bit-writer.ts';

/** The displayed picture: width and height even (4:2:0 crops in steps of 2), fps frames a second. */
export interface VideoFormat {
  readonly width: number;
  readonly height: number;
  readonly fps: number;
}

/** A 4:2:0 picture in planar form, in coded size (whole macroblocks); chroma planes are half size. */
export interface Yuv420Picture {
  readonly width: number;
  readonly height: number;
  readonly y: Uint8Array;
  readonly cb: Uint8Array;
  readonly cr: Uint8Array;
}

/** The motion of a P picture from its IDR picture, in whole luma samples. */
export interface Motion {
  readonly x: number;
  readonly y: number;
}

const NAL_SLICE = 1;
const NAL_IDR_SLICE = 5;
const NAL_SPS = 7;
const NAL_PPS = 8;
/** nal_ref_idc of parameter sets and IDR pictures (any non-zero value), and of the P pictures. */
const REFERENCE = 3;
const NOT_REFERENCE = 0;

const PROFILE_BASELINE = 66;
/** constraint_set0_flag and constraint_set1_flag: Baseline that Main decoders take, "Constrained Baseline" (§ A.2.1.1). */
const CONSTRAINED_BASELINE_FLAGS = 0b1100_0000;
const LOG2_MAX_FRAME_NUM = 4;
/** POC lsb counts two a frame and restarts at each IDR picture; 60 fps needs 120 < 2^8 / 2. */
const LOG2_MAX_PIC_ORDER_CNT_LSB = 8;
const SLICE_TYPE_P = 0;
const SLICE_TYPE_I = 2;
/** I slice mb_type I_16x16_<prediction>_0_0: the prediction mode is added (Table 7-11). */
const MB_TYPE_I_16X16 = 1;
const MB_TYPE_I_PCM = 25;
/** What an I_PCM macroblock counts as for its neighbours' coeff_token (§ 9.2.1). */
const PCM_COEFFICIENTS = 16;
const MB_TYPE_P_L0_16X16 = 0;
/** Each of luma's 256 samples and chroma's 2 × 64 (4:2:0). */
const PCM_BYTES = 384;

/** A picture's size in whole macroblocks. */
export function codedSize(width: number, height: number): { width: number; height: number } {
  return { width: Math.ceil(width / 16) * 16, height: Math.ceil(height / 16) * 16 };
}

/**
 * The IDR picture of `picture`'s samples. A macroblock that repeats the row of samples just above
 * it (or the column just left of it) in every plane is coded as Intra_16x16 vertical (horizontal)
 * prediction with no residual, a dozen bits, which reproduces it exactly; any other is I_PCM.
 * `idrPicId` must differ between two IDR pictures in a row (§ 7.4.3).
 */
export function idrPicture(picture: Yuv420Picture, idrPicId: number): Uint8Array {
  const mbWidth = picture.width / 16;
  const mbHeight = picture.height / 16;
  const writer = new BitWriter(mbWidth * mbHeight * 4 + 64);
  sliceHeader(writer, { type: SLICE_TYPE_I, idrPicId, frameNum: 0, picOrderCntLsb: 0 });
  // Each macroblock's count of coefficients, which selects its neighbours' coeff_token table (§ 9.2.1).
  const coefficients = new Uint8Array(mbWidth * mbHeight);
  for (let mbY = 0, mb = 0; mbY < mbHeight; mbY++) {
    for (let mbX = 0; mbX < mbWidth; mbX++, mb++) {
      const prediction = mbY > 0 && repeatsRowAbove(picture, mbX, mbY) ? VERTICAL : mbX > 0 && repeatsColumnLeft(picture, mbX, mbY) ? HORIZONTAL : undefined;
      if (prediction === undefined) {
        writer.ue(MB_TYPE_I_PCM);
        writer.alignWithZeros();
        writePcmSamples(writer.reserveBytes(PCM_BYTES), picture, mbX, mbY);
        coefficients[mb] = PCM_COEFFICIENTS;
        continue;
      }
      writer.ue(MB_TYPE_I_16X16 + prediction.luma); // coded_block_pattern 0 for luma and chroma
      writer.ue(prediction.chroma); // intra_chroma_pred_mode
      writer.se(0); // mb_qp_delta
      // Intra16x16DCLevel with no coefficient: its coeff_token, selected by the neighbours' counts.
      const left = mbX > 0 ? coefficients[mb - 1] : undefined;
      const above = mbY > 0 ? coefficients[mb - mbWidth] : undefined;
      writeNoCoefficients(writer, left === undefined ? (above ?? 0) : above === undefined ? left : (left + above + 1) >> 1);
    }
  }
  writer.trailingBits();
  return nalUnit(REFERENCE, NAL_IDR_SLICE, writer.finish());
}

/** pcm_sample_luma (16 rows of 16), then pcm_sample_chroma: Cb's 8 × 8, then Cr's (§ 7.3.5). */
function writePcmSamples(out: Uint8Array, picture: Yuv420Picture, mbX: number, mbY: number): void {
  let index = 0;
  for (let row = 0; row < 16; row++) {
    const from = (mbY * 16 + row) * picture.width + mbX * 16;
    for (let column = 0; column < 16; column++) out[index++] = picture.y[from + column];
  }
  const chromaWidth = picture.width / 2;
  for (const plane of [picture.cb, picture.cr]) {
    for (let row = 0; row < 8; row++) {
      const from = (mbY * 8 + row) * chromaWidth + mbX * 8;
      for (let column = 0; column < 8; column++) out[index++] = plane[from + column];
    }
  }
}

/** Intra_16x16 and chroma prediction modes that copy a neighbour's edge samples (§ 8.3.3, § 8.3.4). */
const VERTICAL = { luma: 0, chroma: 2 };
const HORIZONTAL = { luma: 1, chroma: 1 };

/**
 * coeff_token for TotalCoeff 0 (Table 9-5), by nC, the neighbours' mean count of coefficients.
 * A neighbour here counts 16 (I_PCM) or 0, so nC is 0, 8 or 16: Table 9-5's first or last column.
 */
function writeNoCoefficients(writer: BitWriter, nC: number): void {
  if (nC < 2) writer.bits(0b1, 1);
  else writer.bits(0b000011, 6);
}

function repeatsRowAbove(picture: Yuv420Picture, mbX: number, mbY: number): boolean {
  const chromaWidth = picture.width / 2;
  return (
    planeRepeatsRowAbove(picture.y, picture.width, mbX * 16, mbY * 16, 16) &&
    planeRepeatsRowAbove(picture.cb, chromaWidth, mbX * 8, mbY * 8, 8) &&
    planeRepeatsRowAbove(picture.cr, chromaWidth, mbX * 8, mbY * 8, 8)
  );
}

function repeatsColumnLeft(picture: Yuv420Picture, mbX: number, mbY: number): boolean {
  const chromaWidth = picture.width / 2;
  return (
    planeRepeatsColumnLeft(picture.y, picture.width, mbX * 16, mbY * 16, 16) &&
    planeRepeatsColumnLeft(picture.cb, chromaWidth, mbX * 8, mbY * 8, 8) &&
    planeRepeatsColumnLeft(picture.cr, chromaWidth, mbX * 8, mbY * 8, 8)
  );
}

/** Whether the `size` × `size` block at (x, y) has every row equal to the row above the block. */
function planeRepeatsRowAbove(plane: Uint8Array, stride: number, x: number, y: number, size: number): boolean {
  const above = (y - 1) * stride + x;
  for (let row = 0; row < size; row++) {
    const line = (y + row) * stride + x;
    for (let column = 0; column < size; column++) if (plane[line + column] !== plane[above + column]) return false;
  }
  return true;
}

/** Whether the `size` × `size` block at (x, y) has every row equal to the sample left of that row. */
function planeRepeatsColumnLeft(plane: Uint8Array, stride: number, x: number, y: number, size: number): boolean {
  for (let row = 0; row < size; row++) {
    const line = (y + row) * stride + x;
    const left = plane[line - 1];
    for (let column = 0; column < size; column++) if (plane[line + column] !== left) return false;
  }
  return true;
}

/**
 * The P picture `frame` (1, 2, …) after the last IDR picture: that picture moved by `motion`, where
 * a motion of (x, y) shows at each position the IDR sample x to the right and y below (§ 8.4.2.2;
 * positions outside the picture take its nearest edge sample).
 */
export function movedPicture(codedWidth: number, codedHeight: number, frame: number, motion: Motion): Uint8Array {
  const macroblocks = (codedWidth / 16) * (codedHeight / 16);
  const writer = new BitWriter(Math.ceil((macroblocks * 5) / 8) + 32);
  // frame_num counts reference pictures: one more than the IDR's, the same for every P picture (§ 7.4.3).
  sliceHeader(writer, { type: SLICE_TYPE_P, frameNum: 1, picOrderCntLsb: (2 * frame) % (1 << LOG2_MAX_PIC_ORDER_CNT_LSB) });
  // The first macroblock predicts a zero vector (no neighbours), so its difference is the motion itself;
  // every later one predicts the same motion from its neighbours (§ 8.4.1.3) and codes a zero difference.
  writer.ue(0); // mb_skip_run
  writer.ue(MB_TYPE_P_L0_16X16);
  writer.se(4 * motion.x); // mvd_l0, in quarter samples
  writer.se(4 * motion.y);
  writer.ue(0); // coded_block_pattern 0: no residual (Table 9-4, inter)
  // The rest, five ue(0)/se(0) codes each: mb_skip_run, mb_type, both mvd components, coded_block_pattern.
  writer.ones(5 * (macroblocks - 1));
  writer.trailingBits();
  return nalUnit(NOT_REFERENCE, NAL_SLICE, writer.finish());
}

interface SliceHeader {
  readonly type: typeof SLICE_TYPE_I | typeof SLICE_TYPE_P;
  /** Present on IDR pictures only. */
  readonly idrPicId?: number;
  readonly frameNum: number;
  readonly picOrderCntLsb: number;
}

/** slice_header (§ 7.3.3) for the parameter sets below. */
function sliceHeader(writer: BitWriter, header: SliceHeader): void {
  writer.ue(0); // first_mb_in_slice
  writer.ue(header.type);
  writer.ue(0); // pic_parameter_set_id
  writer.bits(header.frameNum, LOG2_MAX_FRAME_NUM);
  if (header.idrPicId !== undefined) writer.ue(header.idrPicId);
  writer.bits(header.picOrderCntLsb, LOG2_MAX_PIC_ORDER_CNT_LSB);
  if (header.type === SLICE_TYPE_P) {
    writer.bits(0, 1); // num_ref_idx_active_override_flag: one reference, the IDR picture
    writer.bits(0, 1); // ref_pic_list_modification_flag_l0
  }
  if (header.idrPicId !== undefined) {
    // dec_ref_pic_marking of an IDR picture (P pictures, not reference pictures, have none)
    writer.bits(0, 1); // no_output_of_prior_pics_flag
    writer.bits(0, 1); // long_term_reference_flag
  }
  writer.se(0); // slice_qp_delta (no residual is coded: the quantiser is never used)
  writer.ue(1); // disable_deblocking_filter_idc: off, the pictures have no block edges to hide
}

/** The sequence parameter set (§ 7.3.2.1.1) with its video usability information (§ E.1.1). */
export function sequenceParameterSet(format: VideoFormat, levelIdc: number): Uint8Array {
  const coded = codedSize(format.width, format.height);
  const writer = new BitWriter();
  writer.bits(PROFILE_BASELINE, 8);
  writer.bits(CONSTRAINED_BASELINE_FLAGS, 8);
  writer.bits(levelIdc, 8);
  writer.ue(0); // seq_parameter_set_id
  writer.ue(LOG2_MAX_FRAME_NUM - 4);
  writer.ue(0); // pic_order_cnt_type 0: POC sent in each slice (type 2 forbids two non-reference pictures in a row)
  writer.ue(LOG2_MAX_PIC_ORDER_CNT_LSB - 4);
  writer.ue(1); // max_num_ref_frames
  writer.bits(0, 1); // gaps_in_frame_num_value_allowed_flag
  writer.ue(coded.width / 16 - 1);
  writer.ue(coded.height / 16 - 1);
  writer.bits(1, 1); // frame_mbs_only_flag
  writer.bits(1, 1); // direct_8x8_inference_flag
  const cropped = coded.width !== format.width || coded.height !== format.height;
  writer.bits(cropped ? 1 : 0, 1); // frame_cropping_flag
  if (cropped) {
    // Offsets in units of 2 samples for 4:2:0 frames (§ 7.4.2.1.1): left, right, top, bottom.
    writer.ue(0);
    writer.ue((coded.width - format.width) / 2);
    writer.ue(0);
    writer.ue((coded.height - format.height) / 2);
  }
  writer.bits(1, 1); // vui_parameters_present_flag
  writer.bits(0, 1); // aspect_ratio_info_present_flag
  writer.bits(0, 1); // overscan_info_present_flag
  writer.bits(0, 1); // video_signal_type_present_flag: the default, limited range
  writer.bits(0, 1); // chroma_loc_info_present_flag
  writer.bits(1, 1); // timing_info_present_flag: two ticks a frame (§ E.2.1)
  writer.bits(1, 32); // num_units_in_tick
  writer.bits(2 * format.fps, 32); // time_scale
  writer.bits(1, 1); // fixed_frame_rate_flag
  writer.bits(0, 1); // nal_hrd_parameters_present_flag
  writer.bits(0, 1); // vcl_hrd_parameters_present_flag
  writer.bits(0, 1); // pic_struct_present_flag
  // bitstream_restriction: no reordering and a one-frame buffer, so a decoder outputs each frame at once.
  writer.bits(1, 1); // bitstream_restriction_flag
  writer.bits(1, 1); // motion_vectors_over_pic_boundaries_flag
  writer.ue(0); // max_bytes_per_pic_denom: no limit
  writer.ue(0); // max_bits_per_mb_denom: no limit
  writer.ue(13); // log2_max_mv_length_horizontal: 2^13 quarter samples, Table A-1's largest range
  writer.ue(11); // log2_max_mv_length_vertical: 2^11 quarter samples, likewise
  writer.ue(0); // max_num_reorder_frames
  writer.ue(1); // max_dec_frame_buffering
  writer.trailingBits();
  return nalUnit(REFERENCE, NAL_SPS, writer.finish());
}

/** The picture parameter set (§ 7.3.2.2). */
export function pictureParameterSet(): Uint8Array {
  const writer = new BitWriter();
  writer.ue(0); // pic_parameter_set_id
  writer.ue(0); // seq_parameter_set_id
  writer.bits(0, 1); // entropy_coding_mode_flag: CAVLC
  writer.bits(0, 1); // bottom_field_pic_order_in_frame_present_flag
  writer.ue(0); // num_slice_groups_minus1
  writer.ue(0); // num_ref_idx_l0_default_active_minus1
  writer.ue(0); // num_ref_idx_l1_default_active_minus1
  writer.bits(0, 1); // weighted_pred_flag
  writer.bits(0, 2); // weighted_bipred_idc
  writer.se(0); // pic_init_qp_minus26
  writer.se(0); // pic_init_qs_minus26
  writer.se(0); // chroma_qp_index_offset
  writer.bits(1, 1); // deblocking_filter_control_present_flag: slices turn the filter off
  writer.bits(0, 1); // constrained_intra_pred_flag
  writer.bits(0, 1); // redundant_pic_cnt_present_flag
  writer.trailingBits();
  return nalUnit(REFERENCE, NAL_PPS, writer.finish());
}

/** Table A-1: MaxMBPS (macroblocks a second), MaxFS (macroblocks), MaxBR (1000 bit/s for Baseline, Table A-2). */
const LEVELS: readonly { idc: number; maxMbps: number; maxFs: number; maxBr: number }[] = [
  { idc: 10, maxMbps: 1485, maxFs: 99, maxBr: 64 },
  { idc: 11, maxMbps: 3000, maxFs: 396, maxBr: 192 },
  { idc: 12, maxMbps: 6000, maxFs: 396, maxBr: 384 },
  { idc: 13, maxMbps: 11880, maxFs: 396, maxBr: 768 },
  { idc: 20, maxMbps: 11880, maxFs: 396, maxBr: 2000 },
  { idc: 21, maxMbps: 19800, maxFs: 792, maxBr: 4000 },
  { idc: 22, maxMbps: 20250, maxFs: 1620, maxBr: 4000 },
  { idc: 30, maxMbps: 40500, maxFs: 1620, maxBr: 10000 },
  { idc: 31, maxMbps: 108000, maxFs: 3600, maxBr: 14000 },
  { idc: 32, maxMbps: 216000, maxFs: 5120, maxBr: 20000 },
  { idc: 40, maxMbps: 245760, maxFs: 8192, maxBr: 20000 },
  { idc: 41, maxMbps: 245760, maxFs: 8192, maxBr: 50000 },
  { idc: 42, maxMbps: 522240, maxFs: 8704, maxBr: 50000 },
  { idc: 50, maxMbps: 589824, maxFs: 22080, maxBr: 135000 },
  { idc: 51, maxMbps: 983040, maxFs: 36864, maxBr: 240000 },
  { idc: 52, maxMbps: 2073600, maxFs: 36864, maxBr: 240000 },
];

/**
 * The smallest level_idc whose limits the stream keeps (§ A.3.1): frame size, each side at most
 * √(8 · MaxFS) macroblocks, macroblock rate, and the peak bits in any one second. Decoders size
 * their buffers by it; a level too low for the stream is a reason to refuse it.
 */
export function levelFor(format: VideoFormat, peakBitsPerSecond: number): number {
  const coded = codedSize(format.width, format.height);
  const mbWidth = coded.width / 16;
  const mbHeight = coded.height / 16;
  const frameMbs = mbWidth * mbHeight;
  const level = LEVELS.find(
    (limits) =>
      frameMbs <= limits.maxFs &&
      mbWidth * mbWidth <= 8 * limits.maxFs &&
      mbHeight * mbHeight <= 8 * limits.maxFs &&
      frameMbs * format.fps <= limits.maxMbps &&
      peakBitsPerSecond <= limits.maxBr * 1000,
  );
  if (!level) throw new RangeError(`no H.264 level holds ${format.width}x${format.height} at ${format.fps} fps and ${peakBitsPerSecond} bit/s`);
  return level.idc;
}
