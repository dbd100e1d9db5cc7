/**
 * Any failure of a request as the GatewayError its answer carries: our own errors as they are,
 * Fastify's validation errors, malformed JSON, wrong content types and bodies over the limit by
 * their meaning. The server's error handler answers with it; a route's request log row records it.
 */
import type { FastifyError, FastifyRequest } from 'fastify';
import { errors, GatewayError } from '../core/errors.ts';
import { validationErrorToGatewayError } from './validation-errors.ts';

/** The router's bound on one path segment (Fastify's `maxParamLength`, whose default is 100). */
export const MAX_PARAM_LENGTH = 100;

export function toGatewayError(error: unknown, request: FastifyRequest): GatewayError {
  if (error instanceof GatewayError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) return validationErrorToGatewayError(fastifyError);
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalidJson();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType(request.headers['content-type']);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errors.contentLengthMismatch();
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.bodyTooLarge();
    case 'FST_ERR_BAD_URL':
      return errors.malformedUrl();
    case 'FST_ERR_MAX_PARAM_LENGTH':
      // 400, not 414: the API documents no 414, and an id that long is simply not a valid id.
      return errors.pathSegmentTooLong(MAX_PARAM_LENGTH);
  }
  if (fastifyError.statusCode === 413) return errors.bodyTooLarge();
  // JSON.parse failures from a custom parser, or a malformed body the framework flagged as 400.
  if (fastifyError instanceof SyntaxError || fastifyError.statusCode === 400) return errors.invalidJson();
  // Any other client error the framework (or a plugin) raised: none is known today, and a status the
  // catalogue does not list for the code would be one no client expects.
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return errors.requestNotProcessable(400);
  }
  return errors.internalError(error);
}
