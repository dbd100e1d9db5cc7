/**
 * The one place upstream HTTP happens: a request over the origin's shared pool, with the route's
 * timeouts, the caller's AbortSignal, and every network failure turned into a GatewayError. Protocols
 * build the request (url, headers, body) and interpret the answer; nothing here knows a provider.
 *
 * Timeouts (docs/operations.md, "Timeouts"): the pool's connect timeout, undici's headers timeout
 * (time to first byte) and body timeout (the longest silence inside a body), and a total deadline of
 * the whole attempt, body included, which aborts the request with a reason of its own so that it
 * is told apart from the caller's cancellation.
 */
import type { Dispatcher } from 'undici';
import { TIMEOUT_DEFAULTS, type UpstreamTimeouts } from '../../catalog/timeouts.ts';
import { errors, GatewayError } from '../../core/errors.ts';
import { poolFor } from './pools.ts';
import type { UpstreamHeaders } from './upstream-errors.ts';

export interface UpstreamCall {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** JSON text, or the bytes of another body (a multipart image edit). */
  readonly body?: string | Uint8Array;
  /**
   * The route's timeouts (the defaults when undefined). The wait for the response headers and each
   * silence in the body are bounded separately, so a long but lively stream is only cut by a total
   * deadline; models answer a non-streaming call only when done, so there the wait for headers is
   * the whole wait.
   */
  readonly timeouts?: UpstreamTimeouts;
  readonly signal: AbortSignal;
  /** What ties the call to its request in the provider's logs and traces. */
  readonly correlation?: Correlation;
}

/** What ties an upstream call to the request it serves. */
export interface Correlation {
  /** The gateway request id, sent as `x-request-id` for correlation in the provider's logs. */
  readonly requestId: string;
  /** The W3C trace context of the attempt's span (`traceparent`, `tracestate`), when tracing is on. */
  readonly traceHeaders?: Readonly<Record<string, string>>;
}

export interface UpstreamResponse {
  readonly status: number;
  readonly headers: UpstreamHeaders;
  readonly body: Dispatcher.ResponseData['body'];
}

/** A whole answer, read (see fetchUpstreamText). */
export interface UpstreamText {
  readonly status: number;
  readonly headers: UpstreamHeaders;
  readonly text: string;
}

/**
 * Upstream URLs are a provider's base URL and a protocol's path, so a process sees few of them:
 * each is parsed once (a URL parse was a tenth of what preparing a call cost). Bounded all the same.
 */
const parsedUrls = new Map<string, { readonly origin: string; readonly path: string }>();
const MAX_PARSED_URLS = 1024;

function originAndPath(url: string): { readonly origin: string; readonly path: string } {
  let parsed = parsedUrls.get(url);
  if (parsed === undefined) {
    const { origin, pathname, search } = new URL(url);
    parsed = { origin, path: pathname + search };
    if (parsedUrls.size >= MAX_PARSED_URLS) parsedUrls.clear();
    parsedUrls.set(url, parsed);
  }
  return parsed;
}

/** The pool, the dispatch options and the timeouts of a call. */
function prepareCall(call: UpstreamCall): { readonly pool: Dispatcher; readonly options: Dispatcher.DispatchOptions; readonly timeouts: UpstreamTimeouts } {
  const url = originAndPath(call.url);
  const timeouts = call.timeouts ?? TIMEOUT_DEFAULTS;
  const headers: Record<string, string> = { ...call.headers };
  if (call.body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  if (call.correlation !== undefined) {
    headers['x-request-id'] = call.correlation.requestId;
    if (call.correlation.traceHeaders !== undefined) Object.assign(headers, call.correlation.traceHeaders);
  }
  return {
    pool: poolFor(url.origin, timeouts.connectMs),
    options: {
      method: call.method,
      path: url.path,
      headers,
      body: call.body,
      headersTimeout: timeouts.firstByteMs,
      bodyTimeout: timeouts.idleMs,
    },
    timeouts,
  };
}

/** The reason a call is aborted with when its total deadline passes (mapped to a timeout, not a cancellation). */
class TotalDeadlineError extends Error {
  override readonly name = 'TotalDeadlineError';
  readonly code = 'GATEWAY_TOTAL_TIMEOUT';
}

/**
 * The signal a call runs under: the caller's, or — with a total deadline — one that also aborts
 * when the deadline passes. `end` stops watching (the answer was read, or the call failed). Not
 * AbortSignal.any, which the runtime keeps alive with its listeners until it aborts.
 */
function deadlineSignal(signal: AbortSignal, totalMs: number | undefined): { readonly signal: AbortSignal; end(): void } {
  if (totalMs === undefined) return { signal, end() {} };
  const controller = new AbortController();
  const onCallerAbort = () => controller.abort(signal.reason);
  if (signal.aborted) controller.abort(signal.reason);
  else signal.addEventListener('abort', onCallerAbort, { once: true });
  const timer = setTimeout(() => controller.abort(new TotalDeadlineError(`no complete answer within ${totalMs} ms`)), totalMs);
  return {
    signal: controller.signal,
    end() {
      clearTimeout(timer);
      signal.removeEventListener('abort', onCallerAbort);
    },
  };
}

/**
 * Sends one request whose answer is consumed as a stream. Throws a GatewayError for a network
 * failure, a timeout or a cancellation; the total deadline keeps running while the body is read.
 */
export async function sendUpstream(call: UpstreamCall): Promise<UpstreamResponse> {
  const { pool, options, timeouts } = prepareCall(call);
  const deadline = deadlineSignal(call.signal, timeouts.totalMs);
  try {
    const response = await pool.request({ ...options, signal: deadline.signal });
    response.body.once('close', deadline.end);
    return { status: response.statusCode, headers: flattenHeaders(response.headers), body: response.body };
  } catch (error) {
    deadline.end();
    throw transportError(error, call.signal);
  }
}

/**
 * Sends one request and reads its whole answer (a non-streaming call), with undici's dispatch
 * rather than `request`: no body stream, no consumer promise chain, one buffer per answer. Those
 * were most of what the upstream call cost per request. Failures as for sendUpstream.
 */
export function fetchUpstreamText(call: UpstreamCall): Promise<UpstreamText> {
  const { pool, options, timeouts } = prepareCall(call);
  const deadline = deadlineSignal(call.signal, timeouts.totalMs);
  const { signal } = deadline;
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      deadline.end();
      reject(transportError(signal.reason, call.signal));
      return;
    }
    let status = 0;
    let headers: UpstreamHeaders = {};
    const chunks: Buffer[] = [];
    let abort: (() => void) | undefined;
    const stopWatching = () => {
      deadline.end();
      if (abort !== undefined) signal.removeEventListener('abort', abort);
    };
    pool.dispatch(options, {
      onRequestStart(controller) {
        abort = () => controller.abort(signal.reason);
        signal.addEventListener('abort', abort, { once: true });
      },
      onResponseStart(_controller, statusCode, responseHeaders) {
        status = statusCode;
        headers = flattenHeaders(responseHeaders);
      },
      onResponseData(_controller, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        stopWatching();
        resolve({ status, headers, text: (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8') });
      },
      onResponseError(_controller, error) {
        stopWatching();
        reject(transportError(error, call.signal));
      },
    });
  });
}

/** Reads a whole body as text, mapping a failure while reading like any other transport failure. */
export async function readBodyText(response: UpstreamResponse, callerSignal: AbortSignal): Promise<string> {
  try {
    return await response.body.text();
  } catch (error) {
    throw transportError(error, callerSignal);
  }
}

/** Parses a 2xx body as JSON; an unreadable body is a retryable upstream fault. */
export function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw errors.malformedUpstream('a response body that is not valid JSON', error);
  }
}

/**
 * Maps what undici (or an abort) throws. The caller's signal decides between a cancellation (the
 * client went away: nothing to fall back to) and a timeout (another endpoint may answer).
 */
export function transportError(error: unknown, callerSignal: AbortSignal): GatewayError {
  if (error instanceof GatewayError) return error;
  if (callerSignal.aborted) {
    return errors.upstreamCancelled(error);
  }
  if (isTimeout(error)) return errors.upstreamNoAnswer(error);
  return errors.upstreamUnreachable(error);
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'GATEWAY_TOTAL_TIMEOUT']);

/** A timeout of undici's, or the total deadline (undici may wrap the abort reason as the cause). */
function isTimeout(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && TIMEOUT_CODES.has(code)) return true;
  return error.cause instanceof TotalDeadlineError;
}

function flattenHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): UpstreamHeaders {
  const flat: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}
