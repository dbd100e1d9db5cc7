/**
 * Plain JSON calls for the non-chat protocols (image generation, video jobs): one request, one JSON
 * answer, the provider's error mapping applied to non-2xx answers.
 */
import type { UpstreamTimeouts } from '../../catalog/timeouts.ts';
import type { GatewayError } from '../../core/errors.ts';
import { type Correlation, parseJsonBody, readBodyText, sendUpstream, transportError } from './http-client.ts';
import type { UpstreamHeaders } from './upstream-errors.ts';

export type ParseUpstreamError = (status: number, headers: UpstreamHeaders, bodyText: string) => GatewayError;

export interface JsonCallOptions {
  readonly headers: Readonly<Record<string, string>>;
  readonly timeouts?: UpstreamTimeouts;
  readonly signal: AbortSignal;
  readonly correlation?: Correlation;
  /** Maps a non-2xx answer (each protocol's errors.ts provides one). */
  readonly parseError: ParseUpstreamError;
}

export interface JsonAnswer {
  readonly status: number;
  readonly headers: UpstreamHeaders;
  readonly body: unknown;
}

export function postJson(url: string, body: unknown, options: JsonCallOptions): Promise<JsonAnswer> {
  return callJson('POST', url, JSON.stringify(body), options);
}

/** A body the caller encoded itself (multipart), with its content type; the answer is JSON. */
export function postEncoded(url: string, body: { readonly bytes: Uint8Array; readonly contentType: string }, options: JsonCallOptions): Promise<JsonAnswer> {
  return callJson('POST', url, body.bytes, { ...options, headers: { ...options.headers, 'content-type': body.contentType } });
}

/** The bytes at a URL (an image an upstream links to instead of sending it). */
export async function getBytes(url: string, options: JsonCallOptions): Promise<Uint8Array> {
  const response = await fetchOk(url, options);
  try {
    return new Uint8Array(await response.body.arrayBuffer());
  } catch (error) {
    throw transportError(error, options.signal);
  }
}

/**
 * The bytes at a URL as they arrive (a video file: never held whole in memory here). A non-2xx
 * answer is mapped by `parseError`; a failure while reading is mapped like any transport failure.
 */
export async function getStream(url: string, options: JsonCallOptions): Promise<AsyncIterable<Uint8Array>> {
  return mappedFailures((await fetchOk(url, options)).body, options.signal);
}

/** A GET whose answer is 2xx; any other status is mapped by `parseError` and thrown. */
async function fetchOk(url: string, options: JsonCallOptions) {
  const response = await sendUpstream({
    method: 'GET',
    url,
    headers: options.headers,
    timeouts: options.timeouts,
    signal: options.signal,
    correlation: options.correlation,
  });
  if (response.status < 200 || response.status > 299) throw options.parseError(response.status, response.headers, await readBodyText(response, options.signal));
  return response;
}

async function* mappedFailures(body: AsyncIterable<Uint8Array>, signal: AbortSignal): AsyncIterable<Uint8Array> {
  try {
    yield* body;
  } catch (error) {
    throw transportError(error, signal);
  }
}

export function getJson(url: string, options: JsonCallOptions): Promise<JsonAnswer> {
  return callJson('GET', url, undefined, options);
}

async function callJson(method: 'GET' | 'POST', url: string, body: string | Uint8Array | undefined, options: JsonCallOptions): Promise<JsonAnswer> {
  const response = await sendUpstream({
    method,
    url,
    headers: options.headers,
    body,
    timeouts: options.timeouts,
    signal: options.signal,
    correlation: options.correlation,
  });
  const text = await readBodyText(response, options.signal);
  if (response.status < 200 || response.status > 299) throw options.parseError(response.status, response.headers, text);
  return { status: response.status, headers: response.headers, body: parseJsonBody(text) };
}
