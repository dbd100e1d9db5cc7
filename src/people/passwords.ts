/**
 * Password hashing with scrypt (node:crypto, RFC 7914). The default parameters follow the OWASP
 * Password Storage Cheat Sheet's scrypt row for N = 2^15: r = 8, p = 3 (32 MiB per hash, about 0.1 s
 * of one core); `dashboard.password_hashing` may raise them, or lower them as far as libsodium's
 * interactive baseline (N = 2^14, r = 8, p = 1). They are stored in each hash, so that changing them
 * later leaves old hashes verifiable.
 * https://cheatsheetseries.owasp.org/cheatsheets/Password_Storage_Cheat_Sheet.html#scrypt
 * https://doc.libsodium.org/advanced/scrypt
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { GatewayConfig } from '../config/schema.ts';

/** scrypt's cost of new hashes: N (CPU and memory) and p (parallelization); r is always 8. */
export interface PasswordHashing {
  readonly n: number;
  readonly p: number;
}

export const DEFAULT_PASSWORD_HASHING: PasswordHashing = { n: 2 ** 15, p: 3 };

export function passwordHashingOf(config: GatewayConfig): PasswordHashing {
  return config.dashboard?.password_hashing ?? DEFAULT_PASSWORD_HASHING;
}
const R = 8;
const KEY_BYTES = 32;
const SALT_BYTES = 16;

export const MIN_PASSWORD_LENGTH = 12;
/** Long enough for any passphrase; bounds the work an attacker can ask of one sign-in. */
export const MAX_PASSWORD_LENGTH = 256;

function derive(password: string, salt: Buffer, options: { N: number; r: number; p: number }): Promise<Buffer> {
  const scryptOptions: ScryptOptions = { ...options, maxmem: 256 * options.N * options.r };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, scryptOptions, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64url. */
export async function hashPassword(password: string, { n, p }: PasswordHashing): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, { N: n, r: R, p });
  return ['scrypt', n, R, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * Verifies against a hash of nothing made with the parameters of new hashes: a sign-in for an
 * unknown email costs what a known one costs, so that its timing does not tell which emails have users.
 */
const decoys = new Map<string, Promise<string>>();
export async function spendVerification(password: string, hashing: PasswordHashing): Promise<void> {
  const key = `${hashing.n}/${hashing.p}`;
  let decoy = decoys.get(key);
  if (decoy === undefined) {
    decoy = hashPassword(randomBytes(16).toString('hex'), hashing);
    decoys.set(key, decoy);
  }
  await verifyPassword(password, await decoy);
}

/** Why a new password is refused, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `The password must be at least ${MIN_PASSWORD_LENGTH} characters long.`;
  if (password.length > MAX_PASSWORD_LENGTH) return `The password must be at most ${MAX_PASSWORD_LENGTH} characters long.`;
  return null;
}
