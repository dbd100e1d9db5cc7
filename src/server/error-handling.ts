/**
 * Turns every failure into the spec's envelope with the status → type mapping of the design notes:
 * our own GatewayErrors, Fastify's validation errors, malformed JSON, wrong content types, bodies
 * over the limit, unknown routes and methods. Nothing internal (stack, SQL, upstream secrets) leaks.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, internalError, invalidRequest } from '../core/errors.ts';
import { validationErrorToGatewayError } from './validation-errors.ts';

export function sendError(reply: FastifyReply, error: GatewayError): FastifyReply {
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  // Official SDKs retry every 5xx unless told not to; a failure we know is final says so.
  if (error.status >= 500 && !error.retryable) reply.header('x-should-retry', 'false');
  return reply.code(error.status).type('application/json').send(error.toEnvelope());
}

export function toGatewayError(error: unknown, request: FastifyRequest): GatewayError {
  if (error instanceof GatewayError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) return validationErrorToGatewayError(fastifyError);
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalidRequest('The request body is not valid JSON.', null, 'invalid_json');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError(fastifyError.statusCode === 415 ? 415 : 400, `Unsupported Content-Type: ${request.headers['content-type'] ?? 'none'}.`, {
        code: 'unsupported_media_type',
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError(413, 'The request body is too large.', { code: 'request_too_large' });
  }
  if (fastifyError.statusCode === 413) {
    return new GatewayError(413, 'The request body is too large.', { code: 'request_too_large' });
  }
  if (fastifyError instanceof SyntaxError || fastifyError.statusCode === 400) {
    return invalidRequest('The request body is not valid JSON.', null, 'invalid_json');
  }
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new GatewayError(fastifyError.statusCode, 'The request could not be processed.', { code: 'invalid_value' });
  }
  return internalError(error);
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const gatewayError = toGatewayError(error, request);
    if (gatewayError.status >= 500) {
      request.log.error({ err: gatewayError.cause ?? error, requestId: request.gatewayRequestId }, 'request failed');
    }
    return sendError(reply, gatewayError);
  });

  app.setNotFoundHandler((request, reply) => {
    const known = app.hasRoute({ url: request.routeOptions.url ?? request.url.split('?')[0], method: 'GET' });
    const error = known
      ? new GatewayError(405, `Method ${request.method} is not allowed on ${request.url}.`, { code: 'method_not_allowed' })
      : new GatewayError(404, `Unknown path ${request.method} ${request.url.split('?')[0]}.`, { code: 'not_found' });
    return sendError(reply, error);
  });
}
