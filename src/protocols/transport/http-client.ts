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

/** A whole answer, read as bytes (see fetchUpstreamBytes). */
export interface UpstreamBytes {
  readonly status: number;
  readonly headers: UpstreamHeaders;
  readonly bytes: Buffer;
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
  return fetchWhole(call, (status, headers, bytes) => ({ status, headers, text: bytes.toString('utf8') }));
}

/** As fetchUpstreamText, the body left as bytes (an answer read from them: core/json-lift.ts). */
export function fetchUpstreamBytes(call: UpstreamCall): Promise<UpstreamBytes> {
  return fetchWhole(call, (status, headers, bytes) => ({ status, headers, bytes }));
}

function fetchWhole<T>(call: UpstreamCall, answer: (status: number, headers: UpstreamHeaders, bytes: Buffer) => T): Promise<T> {
  return new Promise((resolve, reject) =>
    dispatchCall(call, reject, (ended) => {
      let status = 0;
      let headers: UpstreamHeaders = {};
      const chunks: Buffer[] = [];
      return {
        onResponseStart(_controller, statusCode, responseHeaders) {
          status = statusCode;
          headers = flattenHeaders(responseHeaders);
        },
        onResponseData(_controller, chunk) {
          chunks.push(chunk);
        },
        onResponseEnd() {
          ended();
          resolve(answer(status, headers, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
        },
        onResponseError(_controller, error) {
          ended();
          reject(transportError(error, call.signal));
        },
      };
    }),
  );
}

/** What reads an answer: every event of undici's dispatch but the request's start. */
type AnswerHandler = Omit<Dispatcher.DispatchHandler, 'onRequestStart'> & { readonly started?: (controller: Dispatcher.DispatchController) => void };

/**
 * Dispatches a call under the caller's signal and its total deadline, either of which aborts it (a
 * call aborted before it starts is rejected at once). `answer` makes the handler of the answer,
 * which calls `ended` once the answer ended or failed, to stop watching them.
 */
function dispatchCall(call: UpstreamCall, reject: (error: GatewayError) => void, answer: (ended: () => void) => AnswerHandler): void {
  const { pool, options, timeouts } = prepareCall(call);
  const deadline = deadlineSignal(call.signal, timeouts.totalMs);
  const { signal } = deadline;
  if (signal.aborted) {
    deadline.end();
    reject(transportError(signal.reason, call.signal));
    return;
  }
  let abort: (() => void) | undefined;
  const handler = answer(() => {
    deadline.end();
    if (abort !== undefined) signal.removeEventListener('abort', abort);
  });
  pool.dispatch(options, {
    ...handler,
    onRequestStart(controller) {
      handler.started?.(controller);
      abort = () => controller.abort(signal.reason);
      signal.addEventListener('abort', abort, { once: true });
    },
  });
}

/** A streamed answer whose body is read through {@link UpstreamBody}. */
export interface UpstreamStream {
  readonly status: number;
  readonly headers: UpstreamHeaders;
  readonly body: UpstreamBody;
}

/**
 * The body of a streamed answer. What arrived since the last read is handed over at once, one
 * promise per read: no body stream and no async iterator between the socket and its reader, which
 * were a large part of what a streamed request cost.
 */
export interface UpstreamBody {
  /** The chunks that arrived since the last read (waiting for one when none did); undefined at the end. Throws a GatewayError. */
  read(): Promise<readonly Buffer[] | undefined>;
  /** The rest of the body as text (the answer of a failed call). */
  text(): Promise<string>;
  /**
   * The answer is complete: what may remain of the body (a last chunk boundary) is read and
   * dropped, up to `limit` bytes, so that the connection is kept for the next request.
   */
  drain(limit: number): void;
  /** Stops the upstream: its consumer stopped early. */
  cancel(): void;
}

/** Unread bytes past which the upstream is paused until its reader catches up. */
const PAUSE_AFTER_BYTES = 64 * 1024;

/**
 * Sends one request whose answer is read as a stream, with undici's dispatch: the body's chunks
 * are queued as they arrive and handed to each read together (see UpstreamBody), with
 * back-pressure. Failures as for sendUpstream.
 */
export function streamUpstream(call: UpstreamCall): Promise<UpstreamStream> {
  return new Promise((resolve, reject) =>
    dispatchCall(call, reject, (ended) => {
      const body = new DispatchedBody();
      let answered = false;
      return {
        started(controller) {
          body.controller = controller;
        },
        onResponseStart(_controller, statusCode, responseHeaders) {
          answered = true;
          resolve({ status: statusCode, headers: flattenHeaders(responseHeaders), body });
        },
        onResponseData(_controller, chunk) {
          body.arrived(chunk);
        },
        onResponseEnd() {
          ended();
          body.ended();
        },
        onResponseError(_controller, error) {
          ended();
          const failure = transportError(error, call.signal);
          if (answered) body.failed(failure);
          else reject(failure);
        },
      };
    }),
  );
}

class DispatchedBody implements UpstreamBody {
  controller: Dispatcher.DispatchController | undefined;
  #queue: Buffer[] = [];
  #queuedBytes = 0;
  #done = false;
  #failure: GatewayError | undefined;
  #waiter: { resolve(chunks: readonly Buffer[] | undefined): void; reject(error: GatewayError): void } | undefined;
  /** Bytes still allowed to arrive once the reader has what it wanted; undefined while it reads. */
  #drainAllowance: number | undefined;

  arrived(chunk: Buffer): void {
    if (this.#drainAllowance !== undefined) {
      this.#drainAllowance -= chunk.length;
      if (this.#drainAllowance < 0) this.cancel();
      return;
    }
    const waiter = this.#waiter;
    if (waiter !== undefined) {
      this.#waiter = undefined;
      waiter.resolve([chunk]);
      return;
    }
    this.#queue.push(chunk);
    this.#queuedBytes += chunk.length;
    if (this.#queuedBytes > PAUSE_AFTER_BYTES) this.controller?.pause();
  }

  ended(): void {
    this.#done = true;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.resolve(undefined);
  }

  failed(error: GatewayError): void {
    this.#done = true;
    this.#failure = error;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.reject(error);
  }

  read(): Promise<readonly Buffer[] | undefined> {
    if (this.#queue.length > 0) {
      const chunks = this.#queue;
      this.#queue = [];
      this.#queuedBytes = 0;
      if (this.controller?.paused) this.controller.resume();
      return Promise.resolve(chunks);
    }
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#done) return Promise.resolve(undefined);
    if (this.controller?.paused) this.controller.resume();
    return new Promise((resolve, reject) => (this.#waiter = { resolve, reject }));
  }

  async text(): Promise<string> {
    const chunks: Buffer[] = [];
    for (let read = await this.read(); read !== undefined; read = await this.read()) chunks.push(...read);
    return Buffer.concat(chunks).toString('utf8');
  }

  drain(limit: number): void {
    if (this.#done) return;
    this.#drainAllowance = limit - this.#queuedBytes;
    this.#queue = [];
    this.#queuedBytes = 0;
    if (this.#drainAllowance < 0) this.cancel();
    else if (this.controller?.paused) this.controller.resume();
  }

  cancel(): void {
    if (this.#done) return;
    this.#done = true;
    this.#queue = [];
    this.controller?.abort(new Error("the stream's reader stopped"));
  }
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
