/**
 * Any failure of a request as the GatewayError its answer carries: our own errors as they are,
 * Fastify's validation errors, malformed JSON, wrong content types and bodies over the limit by
 * their meaning. The server's error handler answers with it; a route's request log row records it.
 */
import type { FastifyError, FastifyRequest } from 'fastify';
import { GatewayError, internalError, invalidRequest } from '../core/errors.ts';
import { validationErrorToGatewayError } from './validation-errors.ts';

const tooLarge = () => new GatewayError(413, 'The request body is too large.', { code: 'request_too_large' });
const badJson = () => invalidRequest('The request body is not valid JSON.', null, 'invalid_json');

export function toGatewayError(error: unknown, request: FastifyRequest): GatewayError {
  if (error instanceof GatewayError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) return validationErrorToGatewayError(fastifyError);
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return badJson();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError(415, `Unsupported Content-Type: ${request.headers['content-type'] ?? 'none'}. Send application/json.`, {
        code: 'unsupported_media_type',
      });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return invalidRequest('The Content-Length header does not match the body.', null, 'invalid_value');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return tooLarge();
    case 'FST_ERR_BAD_URL':
      return invalidRequest('The request URL is malformed.', null, 'invalid_value');
  }
  if (fastifyError.statusCode === 413) return tooLarge();
  // JSON.parse failures from a custom parser, or a malformed body the framework flagged as 400.
  if (fastifyError instanceof SyntaxError || fastifyError.statusCode === 400) return badJson();
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new GatewayError(fastifyError.statusCode, 'The request could not be processed.', { code: 'invalid_value' });
  }
  return internalError(error);
}
