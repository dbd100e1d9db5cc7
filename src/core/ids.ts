import { randomBytes, randomFillSync } from 'node:crypto';

/**
 * Time-ordered identifiers: 48 bits of milliseconds then 80 random bits, base32-encoded (Crockford,
 * lowercase). Sorting the text sorts by creation time, which keeps inserts under a unique index at
 * the end of the B-tree (measurably cheaper than random UUIDs, see docs/performance.md).
 */
const ALPHABET = Buffer.from('0123456789abcdefghjkmnpqrstvwxyz', 'latin1');
const TIME_CHARS = 11;
const RANDOM_CHARS = 16;
/** The characters of one id, written in place and read as one string (no string per character). */
const chars = Buffer.alloc(TIME_CHARS + RANDOM_CHARS);

let lastStamp = 0;

// The random bits of ids come from a pool refilled 4 KiB at a time: one call into the CSPRNG per
// 400 ids instead of one per id (a request makes several ids; the per-call cost showed in profiles).
const POOL_BYTES = 4_000;
const ID_RANDOM_BYTES = 10;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

function takeRandom(): number {
  if (poolOffset + ID_RANDOM_BYTES > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const offset = poolOffset;
  poolOffset += ID_RANDOM_BYTES;
  return offset;
}

export function timeOrderedId(prefix: string): string {
  // 52 bits: the millisecond times 16 plus a 4-bit sequence, exact in a double. More than 16 ids in
  // one millisecond (or a clock step back) borrow the next stamps, so ids stay strictly ordered.
  const stamp = Math.max(Date.now() * 16, lastStamp + 1);
  lastStamp = stamp;
  let t = stamp;
  for (let i = TIME_CHARS - 1; i >= 0; i--) {
    chars[i] = ALPHABET[t % 32];
    t = Math.floor(t / 32);
  }
  const offset = takeRandom();
  for (let i = 0; i < RANDOM_CHARS; i++) {
    const bitIndex = i * 5;
    const byte = offset + (bitIndex >> 3);
    const shift = bitIndex & 7;
    const word = (pool[byte] << 8) | (bitIndex >> 3 < ID_RANDOM_BYTES - 1 ? pool[byte + 1] : 0);
    chars[TIME_CHARS + i] = ALPHABET[(word >> (11 - shift)) & 31];
  }
  return `${prefix}_${chars.toString('latin1')}`;
}

/** An opaque random token (for API keys and signed URLs): `bytes` of randomness, base64url. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
