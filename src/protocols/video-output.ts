/**
 * What every video protocol does with a finished operation: its pure parser says where the file is
 * (a URL, or base64 sent inline) and this module turns that into the UpstreamVideo the job fetches.
 * A download is streamed, and carries the provider's key only to the provider's own origin: an
 * upstream may link to a CDN or a signed storage URL, which must never see the gateway's key.
 */
import type { OperationState, UpstreamVideo } from '../canonical/index.ts';
import { strictBase64 } from '../core/base64.ts';
import { errors, GatewayError } from '../core/errors.ts';
import { getStream, type JsonCallOptions } from './transport/json-call.ts';
import { parseRetryAfter, type UpstreamHeaders } from './transport/upstream-errors.ts';

export const DEFAULT_VIDEO_TYPE = 'video/mp4';

/** Where a finished video is, as an operation's answer says. */
export type VideoFile = {
  readonly contentType: string;
  /** Seconds delivered, when the upstream says. */
  readonly durationSeconds?: number;
} & ({ readonly url: string } | { readonly bytes: Uint8Array });

/** An operation state as a pure parser reads it: a finished video is still only its file's whereabouts. */
export type ParsedOperation = Exclude<OperationState, { readonly status: 'succeeded' }> | { readonly status: 'succeeded'; readonly file: VideoFile };

/** The file of a URL an upstream answered; anything but http(s) is a malformed answer. */
export function linkedVideo(url: unknown, contentType: string | undefined, durationSeconds?: number): VideoFile {
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) throw errors.malformedUpstream('a video URL that is not http(s)');
  return withDuration({ url, contentType: videoType(contentType) }, durationSeconds);
}

/** The file an upstream sent inline as base64, decoded strictly. */
export function inlineVideo(base64: unknown, contentType: string | undefined, durationSeconds?: number): VideoFile {
  const bytes = typeof base64 === 'string' ? strictBase64(base64) : undefined;
  if (!bytes) throw errors.malformedUpstream('a video that is not valid base64');
  return withDuration({ bytes, contentType: videoType(contentType) }, durationSeconds);
}

const VIDEO_TYPE = /^video\/[a-z0-9][a-z0-9.+-]{0,63}$/;

/**
 * The stored file's content type, as the upstream named it: a video type only. The file is served
 * back with this type, so a `text/html` "video" would be a page of the upstream's making.
 */
function videoType(contentType: string | undefined): string {
  if (contentType === undefined) return DEFAULT_VIDEO_TYPE;
  const type = contentType.toLowerCase();
  if (!VIDEO_TYPE.test(type)) throw errors.malformedUpstream('a video whose content type is not a video type');
  return type;
}

/**
 * A finished operation's file: once an operation is done, looking again gives the same answer, so
 * an unusable file (a bad URL, broken base64) fails the operation instead of being retried.
 */
export function finished(file: () => VideoFile): ParsedOperation {
  try {
    return { status: 'succeeded', file: file() };
  } catch (error) {
    if (error instanceof GatewayError) return { status: 'failed', error };
    throw error;
  }
}

function withDuration(file: VideoFile, durationSeconds: number | undefined): VideoFile {
  return durationSeconds === undefined ? file : { ...file, durationSeconds };
}

/**
 * The operation state a job receives. `download` is how the protocol calls its provider (key
 * headers included); `origin` is the provider's, the only one its key headers are sent to.
 */
export function deliverable(parsed: ParsedOperation, download: JsonCallOptions, origin: string): OperationState {
  if (parsed.status !== 'succeeded') return parsed;
  return { status: 'succeeded', video: upstreamVideo(parsed.file, download, origin) };
}

/** A running operation with the wait its look's answer asked for (Retry-After), if any: the job honours it. */
export function withAskedWait<State extends { readonly status: string }>(state: State, headers: UpstreamHeaders): State | OperationState {
  if (state.status !== 'running') return state;
  const seconds = parseRetryAfter(headers);
  return seconds === undefined ? state : { status: 'running', retryAfterMs: seconds * 1000 };
}

/** The options of a call to `url`: the provider's key headers only when the URL is on its `origin`. */
export function optionsFor(url: string, options: JsonCallOptions, origin: string): JsonCallOptions {
  return sameOrigin(url, origin) ? options : { ...options, headers: {} };
}

function upstreamVideo(file: VideoFile, download: JsonCallOptions, origin: string): UpstreamVideo {
  const fetch = 'bytes' in file ? () => Promise.resolve(file.bytes) : () => getStream(file.url, optionsFor(file.url, download, origin));
  return { contentType: file.contentType, ...(file.durationSeconds === undefined ? {} : { durationSeconds: file.durationSeconds }), fetch };
}

/** Whether `url` is on `origin` (scheme, host and port). */
function sameOrigin(url: string, origin: string): boolean {
  try {
    return new URL(url).origin === new URL(origin).origin;
  } catch {
    return false;
  }
}
