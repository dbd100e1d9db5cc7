/**
 * What every HTTP protocol's request has in common: the provider's base URL (or the protocol's
 * default) without trailing slashes, a JSON body, the credential headers only when a key is
 * configured (local compatible servers such as vLLM or llama.cpp often run without one), and SSE
 * asked for when streaming. A protocol states only where its requests go, how they authenticate and
 * what body they carry; the builder stays pure, so the same request always gives the same bytes.
 *
 * `extra_body` options reach the upstream here, for every protocol alike: the policy has already
 * checked each `extra_body.<group>.<option>` against the route's parameter constraints, so every
 * option left is one the operator allowed for this route, named as the upstream names it. They
 * are written last, over what the gateway derived, as the OpenAI SDK's own `extra_body` does.
 */
import type { CanonicalRequest } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import type { HttpChatTranslator } from './protocol.ts';

export interface UpstreamAddress {
  /** Used when the provider config names no base_url. */
  readonly defaultBaseUrl: string;
  credentialHeaders(apiKey: string): Record<string, string>;
}

export interface UpstreamRequestShape extends UpstreamAddress {
  /** After the base URL, leading slash included. */
  path(endpoint: RouteEndpoint, stream: boolean): string;
  /** Sent on every request, between content-type and the credential. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Headers that depend on the request (Anthropic's `anthropic-beta`), after the fixed ones. */
  requestHeaders?(request: CanonicalRequest): Readonly<Record<string, string>> | undefined;
  body(request: CanonicalRequest, endpoint: RouteEndpoint, stream: boolean): object;
  /** Where in the body `extra_body` options go when not at its top level (Gemini: generationConfig). */
  extraOptionsTarget?(body: object): Record<string, unknown>;
}

export function upstreamRequestBuilder(shape: UpstreamRequestShape): HttpChatTranslator['buildRequest'] {
  return (request, endpoint, apiKey, stream) => {
    const base = (endpoint.provider.base_url ?? shape.defaultBaseUrl).replace(/\/+$/, '');
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      ...shape.headers,
      ...shape.requestHeaders?.(request),
      ...(apiKey !== undefined && shape.credentialHeaders(apiKey)),
    };
    if (stream) headers.accept = 'text/event-stream';
    const body = shape.body(request, endpoint, stream);
    if (request.extraBody !== undefined) {
      const target = shape.extraOptionsTarget?.(body) ?? (body as Record<string, unknown>);
      for (const options of Object.values(request.extraBody)) Object.assign(target, options);
    }
    return { url: `${base}${shape.path(endpoint, stream)}`, headers, body: JSON.stringify(body) };
  };
}
