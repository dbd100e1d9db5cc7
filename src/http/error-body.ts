/**
 * The body of an error answer. Every route answers with the gateway's envelope
 * (`{error: {message, type, param, code}}`, docs/errors.md) unless its route family states its
 * own rendering in the route's `config.errorBody`: the messages dialect adds Anthropic's top-level
 * `"type": "error"`. The server's error handler asks the route here, so the failures Fastify raises
 * before a handler runs (validation, body size, authentication) take the route's shape too.
 */
import type { FastifyReply } from 'fastify';
import type { GatewayError } from '../core/errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** How this route renders an error body; the gateway's envelope when absent. */
    readonly errorBody?: (error: GatewayError) => object;
  }
}

export function errorBodyFor(reply: FastifyReply, error: GatewayError): object {
  // Failures before routing (a malformed URL) have no route options.
  return reply.routeOptions?.config?.errorBody?.(error) ?? error.toEnvelope();
}
