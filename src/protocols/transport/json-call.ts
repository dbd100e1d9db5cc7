/**
 * Plain JSON calls for the non-chat protocols (image generation, video jobs): one request, one JSON
 * answer, the provider's error mapping applied to non-2xx answers.
 */
import type { UpstreamTimeouts } from '../../catalog/timeouts.ts';
import { errors, type GatewayError } from '../../core/errors.ts';
import { liftedJson } from '../../core/json-lift.ts';
import { type Correlation, fetchUpstreamBytes, readBodyText, sendUpstream, transportError } from './http-client.ts';
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
  /** The raw bytes of a value lifted out of the parse (`lift` of postJson; core/json-lift.ts) when `text` is its placeholder. */
  lifted(text: string): Buffer | undefined;
}

/** `lift`: the names of members whose long string values are read from the body's bytes, not parsed (an image's base64). */
export function postJson(url: string, body: unknown, options: JsonCallOptions, lift: readonly string[] = []): Promise<JsonAnswer> {
  return callJson('POST', url, JSON.stringify(body), options, lift);
}

/** A body the caller encoded itself (multipart), with its content type; the answer is JSON. */
export function postEncoded(url: string, body: { readonly bytes: Uint8Array; readonly contentType: string }, options: JsonCallOptions): Promise<JsonAnswer> {
  return callJson('POST', url, body.bytes, { ...options, headers: { ...options.headers, 'content-type': body.contentType } });
}

/** The bytes at a URL (an image an upstream links to instead of sending it). */
export async function getBytes(url: string, options: JsonCallOptions): Promise<Uint8Array> {
  return readBodyBytes((await fetchOk(url, options)).body, options.signal);
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

async function callJson(
  method: 'GET' | 'POST',
  url: string,
  body: string | Uint8Array | undefined,
  options: JsonCallOptions,
  lift: readonly string[] = [],
): Promise<JsonAnswer> {
  // Read whole through undici's dispatch: no body stream (as chat answers, ./http-client.ts).
  const response = await fetchUpstreamBytes({
    method,
    url,
    headers: options.headers,
    body,
    timeouts: options.timeouts,
    signal: options.signal,
    correlation: options.correlation,
  });
  const { bytes } = response;
  if (response.status < 200 || response.status > 299) throw options.parseError(response.status, response.headers, bytes.toString('utf8'));
  try {
    const json = lift.length === 0 ? { value: JSON.parse(bytes.toString('utf8')) as unknown, lifted: () => undefined } : liftedJson(bytes, lift);
    return { status: response.status, headers: response.headers, body: json.value, lifted: json.lifted };
  } catch (error) {
    throw errors.malformedUpstream('a response body that is not valid JSON', error);
  }
}

/** A whole body as one buffer, a failure while reading mapped like any transport failure. */
async function readBodyBytes(body: { arrayBuffer(): Promise<ArrayBuffer> }, callerSignal: AbortSignal): Promise<Buffer> {
  try {
    return Buffer.from(await body.arrayBuffer());
  } catch (error) {
    throw transportError(error, callerSignal);
  }
}
