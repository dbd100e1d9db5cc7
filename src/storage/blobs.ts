/**
 * Stored media outputs (images, videos), addressed by a key such as `outputs/req_…/0.png`.
 *
 * The filesystem implementation keeps each blob in one file under `<dataDir>/blobs`: a first line
 * with the content type, then the bytes. One file per blob means a put is a single atomic rename,
 * so a reader never sees bytes without their type or a half-written blob.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { errors } from '../core/errors.ts';

export interface StoredBlob {
  readonly bytes: Uint8Array;
  readonly contentType: string;
}

export interface BlobStore {
  put(key: string, bytes: Uint8Array, contentType: string): Promise<void>;
  /** null when no blob has the key. */
  get(key: string): Promise<StoredBlob | null>;
  /** Deleting a missing blob is not an error. */
  delete(key: string): Promise<void>;
}

export const BLOB_FOLDER = 'blobs';

/**
 * Keys are relative paths of plain segments: letters, digits, `.`, `_`, `-`, separated by `/`.
 * That rules out `..`, absolute paths, backslashes and empty segments, so a key can never name a
 * file outside the blob folder.
 */
const KEY_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
const MAX_KEY_LENGTH = 512;

export function isSafeBlobKey(key: string): boolean {
  return key.length > 0 && key.length <= MAX_KEY_LENGTH && key.split('/').every((segment) => KEY_SEGMENT.test(segment));
}

/** A MIME type on one line (the header line of the stored file). */
const CONTENT_TYPE = /^[\x21-\x7e][\x20-\x7e]*$/;
const NEWLINE = 0x0a;

export function createFileBlobStore(dataDir: string): BlobStore {
  const root = join(dataDir, BLOB_FOLDER);

  function pathOf(key: string): string {
    if (!isSafeBlobKey(key)) throw errors.invalidValue(null, `invalid blob key ${JSON.stringify(key)}`);
    return join(root, ...key.split('/'));
  }

  return {
    async put(key, bytes, contentType) {
      const path = pathOf(key);
      if (!CONTENT_TYPE.test(contentType)) throw errors.invalidValue(null, `invalid content type ${JSON.stringify(contentType)}`);
      await mkdir(dirname(path), { recursive: true });
      // Written aside under a name no key can have (keys never start with '.'), then renamed in place.
      const temporary = join(dirname(path), `.${randomBytes(8).toString('hex')}.tmp`);
      try {
        await writeFile(temporary, [Buffer.from(`${contentType}\n`, 'latin1'), bytes]);
        await rename(temporary, path);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
    },
    async get(key) {
      let file: Buffer;
      try {
        file = await readFile(pathOf(key));
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
      const end = file.indexOf(NEWLINE);
      return {
        contentType: file.subarray(0, end).toString('latin1'),
        bytes: new Uint8Array(file.buffer, file.byteOffset + end + 1, file.length - end - 1),
      };
    },
    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
  };
}

function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  // ENOTDIR: a key whose prefix is a blob, not a folder (`a.png/b`), names nothing.
  return code === 'ENOENT' || code === 'ENOTDIR';
}
