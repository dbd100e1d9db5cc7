/**
 * The bit-level writing an H.264 encoder needs: a raw byte sequence payload (RBSP) written MSB
 * first with the fixed-length and Exp-Golomb codes of ITU-T H.264 § 7.2 and § 9.1, and the NAL unit
 * that carries it (§ 7.3.1, with emulation prevention bytes).
 * https://www.itu.int/rec/T-REC-H.264
 */

export class BitWriter {
  #bytes: Uint8Array;
  /** Whole bytes written. */
  #length = 0;
  /** Bits of the byte being filled, right-aligned; `#pending` of them (0..7). */
  #current = 0;
  #pending = 0;

  constructor(capacity = 64) {
    this.#bytes = new Uint8Array(capacity);
  }

  get byteAligned(): boolean {
    return this.#pending === 0;
  }

  /** u(n): the `count` low bits of `value`, most significant first (count ≤ 32). */
  bits(value: number, count: number): void {
    for (let shift = count - 1; shift >= 0; shift--) this.#bit((value >>> shift) & 1);
  }

  /** `count` one bits, whole bytes at a time where aligned. */
  ones(count: number): void {
    while (count > 0 && this.#pending !== 0) {
      this.#bit(1);
      count--;
    }
    const whole = count >>> 3;
    this.#reserve(whole);
    this.#bytes.fill(0xff, this.#length, this.#length + whole);
    this.#length += whole;
    for (let rest = count & 7; rest > 0; rest--) this.#bit(1);
  }

  /** ue(v): unsigned Exp-Golomb (§ 9.1). */
  ue(value: number): void {
    const code = value + 1;
    const length = 32 - Math.clz32(code);
    this.bits(0, length - 1);
    this.bits(code, length);
  }

  /** se(v): signed Exp-Golomb, mapped 0, 1, −1, 2, −2, … (§ 9.1.1). */
  se(value: number): void {
    this.ue(value > 0 ? 2 * value - 1 : -2 * value);
  }

  /** Zero bits up to the next byte boundary (as pcm_alignment_zero_bit). */
  alignWithZeros(): void {
    while (this.#pending !== 0) this.#bit(0);
  }

  /** The next `count` bytes of the output, to be filled by the caller; the writer must be byte aligned. */
  reserveBytes(count: number): Uint8Array {
    if (this.#pending !== 0) throw new Error('BitWriter.reserveBytes needs a byte-aligned position');
    this.#reserve(count);
    const view = this.#bytes.subarray(this.#length, this.#length + count);
    this.#length += count;
    return view;
  }

  /** rbsp_trailing_bits (§ 7.3.2.11): a stop bit, then zeros to the byte boundary. */
  trailingBits(): void {
    this.#bit(1);
    this.alignWithZeros();
  }

  /** The bytes written; the writer must be byte aligned (end with `trailingBits`). */
  finish(): Uint8Array {
    if (this.#pending !== 0) throw new Error('BitWriter.finish needs a byte-aligned position');
    return this.#bytes.subarray(0, this.#length);
  }

  #bit(bit: number): void {
    this.#current = (this.#current << 1) | bit;
    if (++this.#pending === 8) {
      this.#reserve(1);
      this.#bytes[this.#length++] = this.#current;
      this.#current = 0;
      this.#pending = 0;
    }
  }

  #reserve(count: number): void {
    if (this.#length + count <= this.#bytes.length) return;
    const grown = new Uint8Array(Math.max(this.#bytes.length * 2, this.#length + count));
    grown.set(this.#bytes.subarray(0, this.#length));
    this.#bytes = grown;
  }
}

/**
 * A NAL unit (§ 7.3.1): its header byte, then the RBSP with an emulation_prevention_three_byte
 * before every byte ≤ 3 that follows two zero bytes, so that no start code appears inside.
 */
export function nalUnit(refIdc: number, type: number, rbsp: Uint8Array): Uint8Array {
  const escapes = escapePositions(rbsp);
  const nal = new Uint8Array(1 + rbsp.length + escapes.length);
  nal[0] = (refIdc << 5) | type;
  let from = 0;
  let out = 1;
  for (const at of escapes) {
    nal.set(rbsp.subarray(from, at), out);
    out += at - from;
    nal[out++] = 3;
    from = at;
  }
  nal.set(rbsp.subarray(from), out);
  return nal;
}

/**
 * Where the RBSP needs an emulation prevention byte: before each byte ≤ 3 that follows two zero
 * bytes not already followed by one. Zero bytes are found with indexOf, which is much faster than
 * looking at every byte. (An RBSP ending in zero bytes would need one more: rbsp_trailing_bits
 * rules that out here.)
 */
function escapePositions(rbsp: Uint8Array): number[] {
  const positions: number[] = [];
  let zero = rbsp.indexOf(0);
  while (zero !== -1 && zero + 2 < rbsp.length) {
    if (rbsp[zero + 1] !== 0) {
      zero = rbsp.indexOf(0, zero + 2);
    } else if (rbsp[zero + 2] <= 3) {
      positions.push(zero + 2);
      // The escaped byte starts a new count of zeros.
      zero = rbsp[zero + 2] === 0 ? zero + 2 : rbsp.indexOf(0, zero + 3);
    } else {
      zero = rbsp.indexOf(0, zero + 3);
    }
  }
  return positions;
}
