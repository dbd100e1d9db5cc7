/**
 * Stored outputs of requests (docs/outputs.md): the files a request produced, kept in the blob
 * store for as long as its request log row (24 hours), and the signed URLs that serve them without
 * an API key.
 *
 * A file's key is `files/{bucket}/{requestId}.{name}`, the bucket being the request id's first
 * seconds (see `outputBucket`): one folder per two seconds of requests rather than one per request,
 * since creating a folder cost the folder blob store more CPU than writing an image's bytes
 * (docs/performance.md, "Images at the cost of their bytes"). Files written before that layout,
 * `outputs/{requestId}/{name}`, are still read and listed until they expire.
 *
 * Route modules reach this through `AppDeps.outputs`: an image route stores its images with
 * `storeOutputFiles` and answers `response_format: url` with `signedOutputUrl`; GET
 * /v1/outputs/{requestId} (outputs/routes.ts) lists and signs them afresh on each retrieval.
 */
import type { BlobInfo, BlobStore, StoredBlob } from '../storage/blobs.ts';
import { isSafeBlobKey, KEY_SEGMENT } from '../storage/blobs.ts';
import { errors } from '../core/errors.ts';
import { SIGNED_URL_LIFETIME_MS, signPath } from './signing.ts';

/**
 * The Content-Security-Policy of every stored file served back (the public output URLs and the
 * dashboard's downloads): the bytes are an upstream's, so whatever their type says they never run
 * as a page of the gateway's origin.
 */
export const UNTRUSTED_FILE_POLICY = "default-src 'none'; sandbox";

/** One file of a request's output. */
export interface OutputFile {
  /** The file's name within the request: a plain segment such as `image-0.png` (letters, digits, `.`, `_`, `-`). */
  readonly name: string;
  readonly contentType: string;
  readonly bytes: Uint8Array | AsyncIterable<Uint8Array>;
  /** The time the file's lifetime counts from (epoch ms), when not its writing (see BlobStore.put). */
  readonly datedAt?: number;
}

export interface SignedOutputUrl {
  readonly url: string;
  /** Epoch seconds, as in the URL. */
  readonly expiresAt: number;
}

/**
 * The name of a request's text output: the JSON body the client got, kept in its request log row
 * and served from there (docs/outputs.md); no stored file may take it.
 */
export const OUTPUT_JSON_NAME = 'output.json';

/** The key prefix of the files of the layout before `files/` (read until they expire). */
function legacyPrefix(requestId: string): string {
  return `outputs/${requestId}/`;
}

/**
 * The folder of a request's files: its id up to the last three characters of its time (a
 * time-ordered id's 11 characters count sixteenths of a millisecond in base 32, so the bucket
 * changes every 2^15 / 16 ms, about 2 seconds; src/core/ids.ts). Any other id is its own bucket
 * up to the same length.
 */
export function outputBucket(requestId: string): string {
  return requestId.slice(0, requestId.indexOf('_') + 1 + 8);
}

/** The prefix of every key of a request's files: request ids never hold a `.` (isOutputId). */
function outputPrefix(requestId: string): string {
  return `files/${outputBucket(requestId)}/${requestId}.`;
}

export function outputKey(requestId: string, name: string): string {
  return `${outputPrefix(requestId)}${name}`;
}

/** The file name of a stored file's key, in either layout. */
export function outputFileName(key: string): string {
  const last = key.slice(key.lastIndexOf('/') + 1);
  return key.startsWith('files/') ? last.slice(last.indexOf('.') + 1) : last;
}

/** The path a signed URL names (and signs) for a request's file. */
export function outputFilePath(requestId: string, name: string): string {
  return `/v1/outputs/${requestId}/files/${name}`;
}

/** Whether a request id or file name can be part of a key: a single plain segment, no `..`, no `/`. */
export function isPlainSegment(value: string): boolean {
  return KEY_SEGMENT.test(value) && value.length <= 200 && isSafeBlobKey(value);
}

/** A request (or job) id whose files can be stored: a plain segment without a `.`, which ends it in a key. */
function isOutputId(value: string): boolean {
  return isPlainSegment(value) && !value.includes('.');
}

/** A stored file of a request: its name within the request, and what the blob store says of it. */
export interface OutputFileInfo extends BlobInfo {
  readonly name: string;
}

export interface OutputsOptions {
  readonly blobs: BlobStore;
  /** The HMAC key of signed URLs (outputs/secret.ts). */
  readonly secret: Uint8Array;
  /**
   * The origin signed URLs start with (`https://gateway.example.com`, GATEWAY_PUBLIC_URL); when
   * undefined, the origin of the request being answered.
   */
  readonly publicUrl?: string;
}

export class Outputs {
  readonly blobs: BlobStore;
  readonly #secret: Uint8Array;
  readonly #publicUrl: string | undefined;

  constructor(options: OutputsOptions) {
    this.blobs = options.blobs;
    this.#secret = options.secret;
    this.#publicUrl = options.publicUrl?.replace(/\/+$/, '');
  }

  /**
   * Stores a request's output files (each streamed to the blob store); returns what was stored of
   * each (key, size), in order. Kept as long as the request's row, and deleted with it by the sweep.
   */
  async storeOutputFiles(requestId: string, files: readonly OutputFile[]): Promise<BlobInfo[]> {
    if (!isOutputId(requestId)) throw errors.invalidValue(null, `invalid request id ${JSON.stringify(requestId)}`);
    const stored: BlobInfo[] = [];
    for (const file of files) {
      if (!isPlainSegment(file.name) || file.name === OUTPUT_JSON_NAME)
        throw errors.invalidValue(null, `invalid output file name ${JSON.stringify(file.name)}`);
      stored.push(await this.blobs.put(outputKey(requestId, file.name), file.bytes, file.contentType, file.datedAt));
    }
    return stored;
  }

  /** The stored files of a request, by name. */
  async listOutputFiles(requestId: string): Promise<OutputFileInfo[]> {
    if (!isOutputId(requestId)) return [];
    const [current, legacy] = await Promise.all([this.blobs.list(outputPrefix(requestId)), this.blobs.list(legacyPrefix(requestId))]);
    return [...current, ...legacy]
      .map((blob) => ({ ...blob, name: outputFileName(blob.key) }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** One stored file, streamed; null when the request has no file of that name. */
  async readOutputFile(requestId: string, name: string): Promise<StoredBlob | null> {
    if (!isOutputId(requestId) || !isPlainSegment(name)) return null;
    return (await this.blobs.get(outputKey(requestId, name))) ?? this.blobs.get(`${legacyPrefix(requestId)}${name}`);
  }

  /**
   * The origin to sign URLs with: GATEWAY_PUBLIC_URL when the operator set it, else the origin the
   * client reached (Fastify's `request.protocol` and `request.host`).
   */
  originOf(request: { readonly protocol: string; readonly host: string }): string {
    return this.#publicUrl ?? `${request.protocol}://${request.host}`;
  }

  /**
   * A URL that serves a request's file without an API key until 10 minutes after `now` (epoch ms).
   * `origin`: `originOf(request)`. The file need not exist yet: signing only names it.
   */
  signedOutputUrl(origin: string, requestId: string, name: string, now: number): SignedOutputUrl {
    if (!isPlainSegment(requestId) || !isPlainSegment(name)) throw errors.invalidValue(null, `invalid output file ${JSON.stringify(`${requestId}/${name}`)}`);
    const expiresAt = Math.floor((now + SIGNED_URL_LIFETIME_MS) / 1000);
    const path = outputFilePath(requestId, name);
    const signature = signPath(this.#secret, path, expiresAt);
    return { url: `${origin.replace(/\/+$/, '')}${path}?expires=${expiresAt}&signature=${signature}`, expiresAt };
  }

  /** The secret, for the file route's check (signing.ts). */
  get secret(): Uint8Array {
    return this.#secret;
  }
}
