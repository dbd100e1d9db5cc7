/**
 * The upstream-facing contract. A protocol translates canonical ⇄ one provider wire format; it knows
 * nothing of prices, keys or routing. HTTP protocols are built from pure translators (request,
 * response, stream decoder, error mapping) by `httpChatProtocol` in ./http-protocol.ts; the built-in
 * simulated provider implements the contract directly.
 */
import type { CanonicalParam, CanonicalRequest, CanonicalResult, StreamBatch, StreamEvent } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import type { GatewayError } from '../core/errors.ts';
import { defineCapability } from './capability.ts';
import type { Correlation } from './transport/http-client.ts';

export interface CallContext extends Correlation {
  /** The provider credential, read from the environment variable the config names. */
  readonly apiKey: string | undefined;
  readonly signal: AbortSignal;
}

/** Text generation: what the chat, messages and responses dialects call. */
export interface ChatProtocol {
  /**
   * Canonical parameters this protocol cannot express at all. Policy rejects them with 400
   * unsupported_parameter before any credit moves (e.g. responses-style upstreams:
   * docs/chat-completions.md, rule 3).
   */
  readonly unsupportedParameters: readonly CanonicalParam[];
  complete(request: CanonicalRequest, endpoint: RouteEndpoint, context: CallContext): Promise<CanonicalResult>;
  /**
   * Streams canonical events, in batches of those that arrived together. An upstream failure
   * before the first event is thrown from the first `next()` (so routing can fall back); after
   * that it arrives as a final `error` event.
   */
  stream(request: CanonicalRequest, endpoint: RouteEndpoint, context: CallContext): AsyncIterable<StreamBatch>;
}

/** A wire request built by a pure translator; the transport adds nothing but the connection. */
export interface UpstreamHttpRequest {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export interface StreamDecoder {
  /** Feeds one SSE message (`event` name when the wire has one); returns the canonical events it completes. */
  push(message: { readonly event?: string; readonly data: string }): StreamEvent[];
  /** Called when the upstream body ends; returns the closing events (or an error event when cut short). */
  end(): StreamEvent[];
}

/**
 * How an upstream stream's text deltas are read. `templates` (the default): a delta that differs
 * from the last one decoded in full only by its text is read through a template learned from that
 * one (delta-template.ts), without parsing it. `full`: every chunk is parsed and checked. Both give
 * the same events, which the tests hold them to; `full` (GATEWAY_STREAM_DECODING=full) rules the
 * template reading out when a stream is under suspicion.
 */
export type StreamDecoding = 'templates' | 'full';

export interface StreamDecoderOptions {
  /** False decodes every event in full; a protocol without templates ignores it. */
  readonly templates?: boolean;
}

/** The pure parts of an HTTP protocol. */
export interface HttpChatTranslator {
  readonly unsupportedParameters: readonly CanonicalParam[];
  buildRequest(request: CanonicalRequest, endpoint: RouteEndpoint, apiKey: string | undefined, stream: boolean): UpstreamHttpRequest;
  parseResponse(body: unknown): CanonicalResult;
  createStreamDecoder(options?: StreamDecoderOptions): StreamDecoder;
  /** Maps a non-2xx upstream answer to a gateway error; `retryable` drives provider fallback. */
  parseError(status: number, headers: Readonly<Record<string, string | undefined>>, bodyText: string): GatewayError;
}

export const CHAT = defineCapability<ChatProtocol>('chat');
