/**
 * Stored outputs (images, videos, files), addressed by a key such as `outputs/req_…/image-0.png`.
 *
 * One small interface, streamed both ways, that an S3-compatible store could also implement (put,
 * get, list by prefix, delete; the sweep is a listing of old objects and their deletion):
 * - the filesystem (this file): a folder under the data dir on the embedded default, or a folder
 *   shared by every instance that the operator names (GATEWAY_BLOB_DIR);
 * - PostgreSQL (postgres/blobs.ts): chunked rows, so that any instance serves any blob with no
 *   shared folder.
 * Both pass one contract suite (test/storage/blob-contract.ts).
 *
 * The filesystem implementation keeps each blob in one file: a first line with the content type
 * (and, for a blob put from bytes, a tab and its size), then the bytes. A reader never sees bytes
 * without their type or a half-written blob: a put from a stream, or one that replaces a blob, is
 * written aside and renamed in place; a new key put from bytes on the data dir's folder is written
 * in place under an exclusive create (no temporary file, no rename: docs/performance.md, "Images at
 * the cost of their bytes"), and a file that holds fewer bytes than its first line promises is read
 * as no blob at all, which covers a crash in the middle of the write. A blob's creation time is its file's mtime, set from the
 * store's clock so that the sweep can be tested with another one.
 */
import { randomBytes } from 'node:crypto';
import { type FileHandle, mkdir, open, opendir, rename, rm, rmdir, stat, utimes } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { errors } from '../core/errors.ts';

/** What a blob is written from: bytes, or a stream of chunks (a Node Readable is one). */
export type BlobBody = Uint8Array | AsyncIterable<Uint8Array>;

export interface BlobInfo {
  readonly key: string;
  /** Bytes. */
  readonly size: number;
  readonly contentType: string;
  /** Epoch milliseconds, by the store's clock. */
  readonly createdAt: number;
}

export interface StoredBlob extends BlobInfo {
  /** The bytes, read as they are consumed: never the whole blob in memory. */
  readonly stream: Readable;
}

export interface BlobStore {
  /**
   * Writes (or replaces) a blob; readers see the old one or the whole new one, never a part.
   * `datedAt`: the creation time to record instead of now (epoch ms; a video's file is dated from
   * its job, so that the sweep deletes it when the job expires).
   */
  put(key: string, body: BlobBody, contentType: string, datedAt?: number): Promise<BlobInfo>;
  /** null when no blob has the key. The stream must be consumed or destroyed. */
  get(key: string): Promise<StoredBlob | null>;
  /** The blobs whose key starts with `prefix`, by key. */
  list(prefix: string): Promise<BlobInfo[]>;
  /** Deleting a missing blob is not an error. */
  delete(key: string): Promise<void>;
  /** Deletes at most `limit` blobs created before `createdBefore`; returns how many it deleted. */
  sweep(createdBefore: number, limit: number): Promise<number>;
}

export const BLOB_FOLDER = 'blobs';

/**
 * Keys are relative paths of plain segments: letters, digits, `.`, `_`, `-`, separated by `/`.
 * That rules out `..`, absolute paths, backslashes and empty segments, so a key can never name a
 * file outside the blob folder.
 */
export const KEY_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
const MAX_KEY_LENGTH = 512;

export function isSafeBlobKey(key: string): boolean {
  return key.length > 0 && key.length <= MAX_KEY_LENGTH && key.split('/').every((segment) => KEY_SEGMENT.test(segment));
}

/** A prefix is a key's beginning: empty, or plain segments that may end with `/`. */
function isSafePrefix(prefix: string): boolean {
  return prefix === '' || isSafeBlobKey(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
}

/** A MIME type on one line (the header line of the stored file). */
const CONTENT_TYPE = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;
const NEWLINE = 0x0a;
/** What separates the content type from the size in a header line (never part of a content type). */
const TAB = 0x09;
/** The header line is at most this long: a content type of 255 characters, a tab, a size of 16 digits, a newline. */
const HEADER_LIMIT = 255 + 1 + 16 + 1;

export function checkBlobKey(key: string): void {
  if (!isSafeBlobKey(key)) throw errors.invalidValue(null, `invalid blob key ${JSON.stringify(key)}`);
}

export function checkBlobPrefix(prefix: string): void {
  if (!isSafePrefix(prefix)) throw errors.invalidValue(null, `invalid blob key prefix ${JSON.stringify(prefix)}`);
}

export function checkContentType(contentType: string): void {
  if (!CONTENT_TYPE.test(contentType)) throw errors.invalidValue(null, `invalid content type ${JSON.stringify(contentType)}`);
}

/** A body as a stream of chunks. */
export function bodyChunks(body: BlobBody): AsyncIterable<Uint8Array> | Iterable<Uint8Array> {
  return body instanceof Uint8Array ? [body] : body;
}

export interface FileBlobStoreOptions {
  /** The folder blobs live in (created when missing). */
  readonly root: string;
  /** Creation times; replaceable in tests. */
  readonly now?: () => number;
  /**
   * Whether a new key put from bytes is written in place rather than aside and renamed. Only on a
   * folder of this host (the data dir's, beside SQLite): there a reader sees every byte below the
   * size a file has reached, so a file's size tells whether it is whole; a network file system
   * may make a file's size known before every byte below it (its writes reach the server in any
   * order until the file is closed), so a shared folder keeps the rename.
   */
  readonly writeInPlace?: boolean;
}

/** The blob folder of a data dir: `<dataDir>/blobs`. */
export function createFileBlobStore(dataDir: string, now?: () => number): BlobStore {
  return createFolderBlobStore({ root: join(dataDir, BLOB_FOLDER), now, writeInPlace: true });
}

export function createFolderBlobStore(options: FileBlobStoreOptions): BlobStore {
  const { root } = options;
  const now = options.now ?? Date.now;
  // On the system's clock a new file's mtime already says when it was written: no utimes call.
  const systemClock = now === Date.now;

  function pathOf(key: string): string {
    checkBlobKey(key);
    return join(root, ...key.split('/'));
  }

  function keyOf(path: string): string {
    return relative(root, path).split(sep).join('/');
  }

  /** The open file of a blob, with what its header and stat say; null when there is none. */
  async function openBlob(path: string): Promise<{ handle: FileHandle; info: BlobInfo; start: number } | null> {
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    try {
      const header = Buffer.alloc(HEADER_LIMIT);
      const { bytesRead } = await handle.read(header, 0, HEADER_LIMIT, 0);
      const end = header.subarray(0, bytesRead).indexOf(NEWLINE);
      const stats = end < 0 ? undefined : await handle.stat();
      const tab = end < 0 ? -1 : header.subarray(0, end).indexOf(TAB);
      const size = stats === undefined ? -1 : stats.size - end - 1;
      // No whole header line, or other than the bytes it promises: a put still writing, or one
      // that died writing (a crash), which no reader may take for the blob.
      if (stats === undefined || (tab >= 0 && header.toString('latin1', tab + 1, end) !== String(size))) {
        await handle.close();
        return null;
      }
      const info = { key: keyOf(path), contentType: header.toString('latin1', 0, tab >= 0 ? tab : end), size, createdAt: stats.mtimeMs };
      return { handle, info, start: end + 1 };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async function info(path: string): Promise<BlobInfo | null> {
    const blob = await openBlob(path);
    if (blob === null) return null;
    await blob.handle.close();
    return blob.info;
  }

  /**
   * Every blob file under `folder`, depth first. Temporary files (names starting with '.') only
   * with `temporaries`: the sweep removes those a crashed put left behind.
   */
  async function* files(folder: string, temporaries = false): AsyncGenerator<string> {
    let directory: Awaited<ReturnType<typeof opendir>>;
    try {
      directory = await opendir(folder);
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    for await (const entry of directory) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) yield* files(path, temporaries);
      else if (entry.isFile() && (temporaries || !entry.name.startsWith('.'))) yield path;
    }
  }

  /** Removes now-empty folders from `folder` up to the root, so that swept requests leave none behind. */
  async function pruneFolders(folder: string): Promise<void> {
    while (folder !== root && folder.startsWith(root)) {
      try {
        await rmdir(folder);
      } catch {
        return;
      }
      folder = dirname(folder);
    }
  }

  return {
    async put(key, body, contentType, datedAt) {
      const path = pathOf(key);
      checkContentType(contentType);
      const createdAt = datedAt ?? now();
      const dated = datedAt !== undefined || !systemClock ? new Date(createdAt) : undefined;
      // Bytes in hand (an image) carry their size, by which a reader tells a whole file from one
      // still being written; a stream's size is known only at its end.
      const header = Buffer.from(body instanceof Uint8Array ? `${contentType}\t${body.byteLength}\n` : `${contentType}\n`, 'latin1');
      if (body instanceof Uint8Array && options.writeInPlace === true && (await writeNew(path, [header, body], dated))) {
        return { key, size: body.byteLength, contentType, createdAt };
      }
      // Written aside under a name no key can have (keys never start with '.'), then renamed in place.
      const temporary = join(dirname(path), `.${randomBytes(8).toString('hex')}.tmp`);
      const handle = await createFile(temporary);
      try {
        let size: number;
        if (body instanceof Uint8Array) {
          // One write and a close, not a stream and its machinery.
          try {
            await writeAll(handle, [header, body]);
          } finally {
            await handle.close();
          }
          size = body.byteLength;
        } else {
          await pipeline(
            Readable.from(
              (async function* () {
                yield header;
                yield* bodyChunks(body);
              })(),
            ),
            handle.createWriteStream(),
          );
          size = (await stat(temporary)).size - header.length;
        }
        if (dated !== undefined) await utimes(temporary, dated, dated);
        await rename(temporary, path);
        return { key, size, contentType, createdAt };
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
    },
    async get(key) {
      const path = pathOf(key);
      const blob = await openBlob(path);
      if (blob === null) return null;
      // The stream reads the file whose header was read: a put meanwhile renames a new file in
      // place, and this one is read whole all the same (it is removed once closed).
      const stream = blob.handle.createReadStream({ start: blob.start });
      return { ...blob.info, stream };
    },
    async list(prefix) {
      checkBlobPrefix(prefix);
      // Walk only the folder the prefix names (or its parent, for a partial last segment).
      const folder = prefix === '' ? root : prefix.endsWith('/') ? join(root, ...prefix.slice(0, -1).split('/')) : dirname(join(root, ...prefix.split('/')));
      const found: BlobInfo[] = [];
      for await (const path of files(folder)) {
        const key = keyOf(path);
        if (!key.startsWith(prefix)) continue;
        const blob = await info(path);
        if (blob !== null) found.push(blob);
      }
      return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },
    async delete(key) {
      const path = pathOf(key);
      await rm(path, { force: true });
      await pruneFolders(dirname(path));
    },
    async sweep(createdBefore, limit) {
      let deleted = 0;
      for await (const path of files(root, true)) {
        if (deleted >= limit) break;
        let stats: Awaited<ReturnType<typeof stat>>;
        try {
          stats = await stat(path);
        } catch (error) {
          if (isMissing(error)) continue;
          throw error;
        }
        if (stats.mtimeMs >= createdBefore) continue;
        await rm(path, { force: true });
        await pruneFolders(dirname(path));
        deleted++;
      }
      return deleted;
    },
  };
}

/** Writes every byte of `chunks` from the start of a new file (a write may take fewer than asked). */
async function writeAll(handle: FileHandle, chunks: readonly Uint8Array[]): Promise<void> {
  let pending = chunks;
  while (pending.length > 0) {
    let { bytesWritten } = await handle.writev(pending as Uint8Array[]);
    if (bytesWritten === 0) throw new Error('a write to a blob file wrote nothing');
    const rest: Uint8Array[] = [];
    for (const chunk of pending) {
      if (bytesWritten >= chunk.byteLength) bytesWritten -= chunk.byteLength;
      else {
        rest.push(chunk.subarray(bytesWritten));
        bytesWritten = 0;
      }
    }
    pending = rest;
  }
}

/**
 * Writes a blob's file in place when no file has its key (its header carries its size: see
 * openBlob); false when one does, which the caller replaces by a rename. A write that fails leaves
 * the file emptied, which reads as no blob until a put replaces it or the sweep removes it:
 * removing it by its name could remove the blob of a put that replaced it meanwhile.
 */
async function writeNew(path: string, chunks: readonly Uint8Array[], dated: Date | undefined): Promise<boolean> {
  let handle: FileHandle;
  try {
    handle = await createFile(path);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await writeAll(handle, chunks);
    if (dated !== undefined) await handle.utimes(dated, dated);
  } catch (error) {
    await handle.truncate(0).catch(() => {});
    throw error;
  } finally {
    await handle.close();
  }
  return true;
}

/**
 * Creates a new file for a put. Its folder usually exists (folders are shared by many blobs):
 * created only when the file cannot be, which also covers a sweep that removed it emptied.
 */
async function createFile(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'wx', 0o600);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  await mkdir(dirname(path), { recursive: true });
  return open(path, 'wx', 0o600);
}

function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  // ENOTDIR: a key whose prefix is a blob, not a folder (`a.png/b`), names nothing.
  return code === 'ENOENT' || code === 'ENOTDIR';
}
