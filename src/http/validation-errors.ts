import type { FastifyError } from 'fastify';
import { errors, type GatewayError } from '../core/errors.ts';

/**
 * Ajv's first error as a 400 naming the field in the client's terms: `messages[3].role`,
 * `stream_options.include_usage`. A missing field is `missing_required_parameter`.
 */
export function validationErrorToGatewayError(error: FastifyError): GatewayError {
  const first = error.validation?.[0];
  if (!first) return errors.invalidValue(null, error.message);
  const params = first.params as Record<string, unknown>;
  let path = instancePathToParam(first.instancePath);
  if (first.keyword === 'required') {
    const missing = String(params.missingProperty);
    return errors.missingParameter(path ? `${path}.${missing}` : missing);
  }
  if (first.keyword === 'additionalProperties') {
    const extra = String(params.additionalProperty);
    path = path ? `${path}.${extra}` : extra;
    return errors.unrecognizedArgument(path);
  }
  return errors.schemaViolation(path || null, first.message ?? 'invalid');
}

/** `/messages/3/role` → `messages[3].role` */
export function instancePathToParam(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, segment) => (/^\d+$/.test(segment) ? `${acc}[${segment}]` : acc ? `${acc}.${segment}` : segment), '');
}
