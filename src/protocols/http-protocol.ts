/**
 * The generic driver of every HTTP chat protocol: a pure translator (request builder, response
 * parser, stream decoder, error mapping) plus the shared transport. Failure semantics, the same for
 * all providers:
 * - network failures, timeouts and non-2xx answers are GatewayErrors whose `retryable` drives
 *   provider fallback;
 * - a stream that fails before its first canonical event throws from the first `next()` (routing may
 *   still fall back); after that the failure is one final `error` event and the stream ends;
 * - a malformed chunk or an early end is an error event, never an exception out of the decoder.
 */
import { BatchCollector, type CanonicalRequest, type CanonicalResult, type StreamBatch, type StreamEvent } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import { errors, GatewayError } from '../core/errors.ts';
import type { CallContext, ChatProtocol, HttpChatTranslator, StreamDecoder, StreamDecoderOptions, StreamDecoding } from './protocol.ts';
import { fetchUpstreamText, parseJsonBody, streamUpstream, transportError, type UpstreamCall, type UpstreamStream } from './transport/http-client.ts';
import { SseReader, type SseMessage } from './transport/sse.ts';

/** What a finished stream may still send after its last event before its connection is given up. */
const DRAIN_LIMIT_BYTES = 64 * 1024;

export function httpChatProtocol(translator: HttpChatTranslator, decoding: StreamDecoding = 'templates'): ChatProtocol {
  const decoderOptions = { templates: decoding === 'templates' };
  return {
    unsupportedParameters: translator.unsupportedParameters,
    complete: (request, endpoint, context) => complete(translator, request, endpoint, context),
    stream: (request, endpoint, context) => streamEvents(translator, request, endpoint, context, decoderOptions),
  };
}

async function complete(translator: HttpChatTranslator, request: CanonicalRequest, endpoint: RouteEndpoint, context: CallContext): Promise<CanonicalResult> {
  const response = await fetchUpstreamText(upstreamCall(translator, request, endpoint, context, false));
  if (!isSuccess(response.status)) throw translator.parseError(response.status, response.headers, response.text);
  return translator.parseResponse(parseJsonBody(response.text));
}

async function* streamEvents(
  translator: HttpChatTranslator,
  request: CanonicalRequest,
  endpoint: RouteEndpoint,
  context: CallContext,
  decoderOptions: StreamDecoderOptions,
): AsyncGenerator<StreamBatch> {
  const response = await openStream(translator, request, endpoint, context);
  const decoder = translator.createStreamDecoder(decoderOptions);
  let started = false;
  let finished = false;
  const batch = new BatchCollector();
  // Adds the events of one read to its batch, in order; true at an error, which ends the stream.
  // An error before anything was handed out is thrown instead (routing may still fall back).
  const add = (events: readonly StreamEvent[]): boolean => {
    for (const event of events) {
      if (event.type === 'error' && !started && batch.size === 0) throw event.error;
      batch.push(event);
      if (event.type === 'finish') finished = true;
      if (event.type === 'error') return true;
    }
    return false;
  };
  // What was collected since the last hand-out, to be yielded here: a helper generator's `yield*`
  // would wrap every step of this one in an async-from-sync iterator, which cost each network read
  // as much again as the rest of its way to the response's write.
  const take = (): StreamBatch | undefined => {
    const events = batch.take();
    if (events !== undefined) started = true;
    return events;
  };
  try {
    const reader = new SseReader();
    while (true) {
      let chunks: readonly Buffer[] | undefined;
      try {
        chunks = await response.body.read();
      } catch (error) {
        add([{ type: 'error', error: transportError(error, context.signal) }]);
        const failed = take();
        if (failed !== undefined) yield failed;
        return;
      }
      if (chunks === undefined) break;
      let ended = false;
      for (const message of reader.feed(chunks)) {
        ended = add(decode(decoder, message));
        if (ended) break;
      }
      const events = take();
      if (events !== undefined) yield events;
      if (ended) return;
    }
    let ended = false;
    for (const message of reader.end()) {
      ended = add(decode(decoder, message));
      if (ended) break;
    }
    if (!ended) add(finishDecoding(decoder));
    const last = take();
    if (last !== undefined) yield last;
  } finally {
    // A finished answer keeps its connection for the next request: what may remain (a `[DONE]`,
    // the last chunk boundary) is read and dropped, where cancelling would close it. A consumer
    // that stops early (client gone, error) must not leave the upstream body streaming.
    if (finished) response.body.drain(DRAIN_LIMIT_BYTES);
    else response.body.cancel();
  }
}

/** The upstream request of a call, built by the protocol's translator. */
function upstreamCall(translator: HttpChatTranslator, request: CanonicalRequest, endpoint: RouteEndpoint, context: CallContext, stream: boolean): UpstreamCall {
  const wire = translator.buildRequest(request, endpoint, context.apiKey, stream);
  return {
    method: 'POST',
    url: wire.url,
    headers: wire.headers,
    body: wire.body,
    timeouts: endpoint.timeouts,
    signal: context.signal,
    correlation: context,
  };
}

const isSuccess = (status: number) => status >= 200 && status <= 299;

/** Sends a streaming request; a non-2xx answer is read and mapped by the translator. */
async function openStream(translator: HttpChatTranslator, request: CanonicalRequest, endpoint: RouteEndpoint, context: CallContext): Promise<UpstreamStream> {
  const response = await streamUpstream(upstreamCall(translator, request, endpoint, context, true));
  if (isSuccess(response.status)) return response;
  const text = await response.body.text();
  throw translator.parseError(response.status, response.headers, text);
}

/** A decoder that throws on an unexpected shape reports it as a stream error instead of crashing. */
function decode(decoder: StreamDecoder, message: SseMessage): readonly StreamEvent[] {
  try {
    return decoder.push(message);
  } catch (error) {
    return [{ type: 'error', error: asUpstreamFault(error) }];
  }
}

function finishDecoding(decoder: StreamDecoder): readonly StreamEvent[] {
  try {
    return decoder.end();
  } catch (error) {
    return [{ type: 'error', error: asUpstreamFault(error) }];
  }
}

function asUpstreamFault(error: unknown): GatewayError {
  return error instanceof GatewayError ? error : errors.malformedUpstream('a stream event the gateway could not read', error);
}
