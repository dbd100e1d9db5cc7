/**
 * An MP4 file of one H.264 video track, written box by box: ISO/IEC 14496-12 (the ISO base media
 * file format) and 14496-15 § 5 (AVC in it: the `avc1` sample entry, its `avcC` decoder
 * configuration, samples as length-prefixed NAL units). The `moov` box comes before `mdat`
 * ("fast start"), so a player can start before the whole file has arrived.
 * The box layouts: https://developer.apple.com/documentation/quicktime-file-format
 */

export interface AvcTrack {
  /** The displayed size (the SPS's cropped size). */
  readonly width: number;
  readonly height: number;
  /** Frames a second; every sample lasts 1/fps s. */
  readonly fps: number;
  /** The sequence and picture parameter sets, as NAL units. */
  readonly sps: Uint8Array;
  readonly pps: Uint8Array;
  /** One NAL unit a sample (a coded picture), in decoding order, which is also display order. */
  readonly samples: readonly Uint8Array[];
  /** The samples a player can start decoding from (IDR pictures), 0-based. */
  readonly syncSamples: readonly number[];
}

/** Every sample lasts this many ticks, so that any whole frame rate is an exact timescale. */
const TICKS_PER_FRAME = 1000;
/** Each sample's NAL unit is prefixed with its length in this many bytes (avcC lengthSizeMinusOne + 1). */
const NAL_LENGTH_BYTES = 4;
/** 1.0 in 16.16 fixed point, and the identity transformation matrix of mvhd and tkhd. */
const FIXED_ONE = 0x0001_0000;
const IDENTITY_MATRIX = [FIXED_ONE, 0, 0, 0, FIXED_ONE, 0, 0, 0, 0x4000_0000];

export function mp4File(track: AvcTrack): Uint8Array {
  const payload = track.samples.reduce((total, sample) => total + NAL_LENGTH_BYTES + sample.length, 0);
  const mdatHeader = 8;
  if (mdatHeader + payload > 0xffff_ffff) throw new RangeError('mp4File writes files under 4 GiB (32-bit box sizes and chunk offsets)');
  const ftyp = box('ftyp', new Fields().ascii('isom').u32(0x200).ascii('isom').ascii('iso2').ascii('avc1').ascii('mp41'));
  // The chunk offset is a fixed-size field, so moov's size does not depend on its value.
  const moovSize = moov(track, 0).length;
  const moovBox = moov(track, ftyp.length + moovSize + mdatHeader);

  const file = new Uint8Array(ftyp.length + moovBox.length + mdatHeader + payload);
  const view = new DataView(file.buffer);
  file.set(ftyp, 0);
  file.set(moovBox, ftyp.length);
  let at = ftyp.length + moovBox.length;
  view.setUint32(at, mdatHeader + payload);
  file.set(ascii('mdat'), at + 4);
  at += mdatHeader;
  for (const sample of track.samples) {
    view.setUint32(at, sample.length);
    file.set(sample, at + NAL_LENGTH_BYTES);
    at += NAL_LENGTH_BYTES + sample.length;
  }
  return file;
}

/** The movie box: one track whose samples sit in one chunk at `chunkOffset`. */
function moov(track: AvcTrack, chunkOffset: number): Uint8Array {
  const timescale = track.fps * TICKS_PER_FRAME;
  const duration = track.samples.length * TICKS_PER_FRAME;
  const mvhd = fullBox(
    'mvhd',
    0,
    0,
    new Fields()
      .u32(0) // creation_time
      .u32(0) // modification_time
      .u32(timescale)
      .u32(duration)
      .u32(FIXED_ONE) // rate
      .u16(0x0100) // volume 1.0
      .zeros(10)
      .u32s(IDENTITY_MATRIX)
      .zeros(24) // pre_defined
      .u32(2), // next_track_ID
  );
  const tkhd = fullBox(
    'tkhd',
    0,
    0x000003, // track_enabled | track_in_movie
    new Fields()
      .u32(0) // creation_time
      .u32(0) // modification_time
      .u32(1) // track_ID
      .zeros(4)
      .u32(duration)
      .zeros(8)
      .u16(0) // layer
      .u16(0) // alternate_group
      .u16(0) // volume: a video track
      .zeros(2)
      .u32s(IDENTITY_MATRIX)
      .u32(track.width * FIXED_ONE)
      .u32(track.height * FIXED_ONE),
  );
  const mdhd = fullBox(
    'mdhd',
    0,
    0,
    new Fields()
      .u32(0) // creation_time
      .u32(0) // modification_time
      .u32(timescale)
      .u32(duration)
      .u16(0x55c4) // language: 'und', three 5-bit letters
      .u16(0),
  );
  const hdlr = fullBox('hdlr', 0, 0, new Fields().u32(0).ascii('vide').zeros(12).ascii('VideoHandler\0'));
  const vmhd = fullBox('vmhd', 0, 1, new Fields().zeros(8)); // graphicsmode copy, opcolor
  const dinf = box('dinf', fullBox('dref', 0, 0, new Fields().u32(1), fullBox('url ', 0, 1 /* media in this file */, new Fields())));
  const stbl = box('stbl', stsd(track), timeToSample(track), syncSamples(track), sampleToChunk(track), sampleSizes(track), chunkOffsets(chunkOffset));
  const minf = box('minf', vmhd, dinf, stbl);
  return box('moov', mvhd, box('trak', tkhd, box('mdia', mdhd, hdlr, minf)));
}

/** The sample description: an `avc1` visual sample entry with its `avcC` decoder configuration. */
function stsd(track: AvcTrack): Uint8Array {
  const avcC = box(
    'avcC',
    new Fields()
      .u8(1) // configurationVersion
      .u8(track.sps[1]) // AVCProfileIndication, profile_compatibility, AVCLevelIndication: the SPS's own bytes
      .u8(track.sps[2])
      .u8(track.sps[3])
      .u8(0b1111_1100 | (NAL_LENGTH_BYTES - 1))
      .u8(0b1110_0000 | 1) // one SPS
      .u16(track.sps.length)
      .bytes(track.sps)
      .u8(1) // one PPS
      .u16(track.pps.length)
      .bytes(track.pps),
  );
  const avc1 = box(
    'avc1',
    new Fields()
      .zeros(6)
      .u16(1) // data_reference_index
      .zeros(16) // pre_defined, reserved
      .u16(track.width)
      .u16(track.height)
      .u32(0x0048_0000) // horizresolution 72 dpi
      .u32(0x0048_0000) // vertresolution
      .zeros(4)
      .u16(1) // frame_count
      .zeros(32) // compressorname
      .u16(0x0018) // depth: colour, no alpha
      .u16(0xffff), // pre_defined −1
    avcC,
  );
  return fullBox('stsd', 0, 0, new Fields().u32(1), avc1);
}

function timeToSample(track: AvcTrack): Uint8Array {
  return fullBox('stts', 0, 0, new Fields().u32(1).u32(track.samples.length).u32(TICKS_PER_FRAME));
}

function syncSamples(track: AvcTrack): Uint8Array {
  return fullBox('stss', 0, 0, new Fields().u32(track.syncSamples.length).u32s(track.syncSamples.map((index) => index + 1)));
}

/** All samples in one chunk. */
function sampleToChunk(track: AvcTrack): Uint8Array {
  return fullBox('stsc', 0, 0, new Fields().u32(1).u32(1).u32(track.samples.length).u32(1));
}

function sampleSizes(track: AvcTrack): Uint8Array {
  const sizes = track.samples.map((sample) => NAL_LENGTH_BYTES + sample.length);
  return fullBox('stsz', 0, 0, new Fields().u32(0).u32(sizes.length).u32s(sizes));
}

function chunkOffsets(chunkOffset: number): Uint8Array {
  return fullBox('stco', 0, 0, new Fields().u32(1).u32(chunkOffset));
}

function box(type: string, ...children: (Fields | Uint8Array)[]): Uint8Array {
  const parts = children.map((child) => (child instanceof Fields ? child.bytesWritten() : child));
  const size = parts.reduce((total, part) => total + part.length, 8);
  const out = new Uint8Array(size);
  new DataView(out.buffer).setUint32(0, size);
  out.set(ascii(type), 4);
  let at = 8;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** A box with a version byte and 24 bits of flags before its fields. */
function fullBox(type: string, version: number, flags: number, ...children: (Fields | Uint8Array)[]): Uint8Array {
  return box(
    type,
    new Fields()
      .u8(version)
      .u8(flags >>> 16)
      .u16(flags & 0xffff),
    ...children,
  );
}

function ascii(text: string): Uint8Array {
  return Uint8Array.from(text, (character) => character.charCodeAt(0));
}

/** Big-endian fields of a box, appended in order. */
class Fields {
  #bytes: number[] = [];

  u8(value: number): this {
    this.#bytes.push(value & 0xff);
    return this;
  }

  u16(value: number): this {
    return this.u8(value >>> 8).u8(value);
  }

  u32(value: number): this {
    return this.u16(value >>> 16).u16(value);
  }

  u32s(values: readonly number[]): this {
    for (const value of values) this.u32(value);
    return this;
  }

  zeros(count: number): this {
    for (let index = 0; index < count; index++) this.#bytes.push(0);
    return this;
  }

  ascii(text: string): this {
    for (const byte of ascii(text)) this.#bytes.push(byte);
    return this;
  }

  bytes(data: Uint8Array): this {
    for (const byte of data) this.#bytes.push(byte);
    return this;
  }

  bytesWritten(): Uint8Array {
    return Uint8Array.from(this.#bytes);
  }
}
