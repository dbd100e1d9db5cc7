/**
 * The secret output URLs are signed with (signing.ts). Every instance must have the same one, so
 * that any instance serves a URL another signed: an operator of several instances sets
 * GATEWAY_OUTPUT_SECRET on each; otherwise the first start creates a random one in the data dir
 * (mode 0600), which a single server, or instances sharing that folder, keep using.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const OUTPUT_SECRET_FILE = 'output-secret';
const SECRET_BYTES = 32;
/** A secret given by the operator must be at least this long (characters) to resist guessing. */
export const MIN_OPERATOR_SECRET_LENGTH = 32;

export class OutputSecretError extends Error {
  override readonly name = 'OutputSecretError';
}

/** The operator's secret (its UTF-8 bytes), else the data dir's, created on first use. */
export async function loadOutputSecret(input: { readonly dataDir: string; readonly operatorSecret: string | undefined }): Promise<Uint8Array> {
  if (input.operatorSecret !== undefined) {
    if (input.operatorSecret.length < MIN_OPERATOR_SECRET_LENGTH) {
      throw new OutputSecretError(`GATEWAY_OUTPUT_SECRET must be at least ${MIN_OPERATOR_SECRET_LENGTH} characters long`);
    }
    return Buffer.from(input.operatorSecret, 'utf8');
  }
  const path = join(input.dataDir, OUTPUT_SECRET_FILE);
  const existing = await readSecretFile(path);
  if (existing !== null) return existing;
  await mkdir(input.dataDir, { recursive: true });
  // Written whole aside, then linked in place: link fails when the file exists, so of two processes
  // starting at once one creates it, and neither ever reads it half-written.
  const aside = join(input.dataDir, `.${OUTPUT_SECRET_FILE}.${randomBytes(6).toString('hex')}`);
  await writeFile(aside, `${randomBytes(SECRET_BYTES).toString('base64url')}\n`, { flag: 'wx', mode: 0o600 });
  try {
    await link(aside, path);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
  } finally {
    await rm(aside, { force: true });
  }
  const created = await readSecretFile(path);
  if (created === null) throw new OutputSecretError(`the output secret file ${path} is empty`);
  return created;
}

async function readSecretFile(path: string): Promise<Uint8Array | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return null;
    throw error;
  }
  const secret = text.trim();
  return secret === '' ? null : Buffer.from(secret, 'utf8');
}
