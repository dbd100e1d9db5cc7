import type { FastifyError } from 'fastify';
import { invalidRequest, type GatewayError } from '../core/errors.ts';

/**
 * Ajv's first error as a 400 naming the field in the client's terms: `messages[3].role`,
 * `stream_options.include_usage`. A missing field is `missing_required_parameter`.
 */
export function validationErrorToGatewayError(error: FastifyError): GatewayError {
  const first = error.validation?.[0];
  if (!first) return invalidRequest(error.message);
  const params = first.params as Record<string, unknown>;
  let path = instancePathToParam(first.instancePath);
  if (first.keyword === 'required') {
    const missing = String(params.missingProperty);
    const param = path ? `${path}.${missing}` : missing;
    return invalidRequest(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
  }
  if (first.keyword === 'additionalProperties') {
    const extra = String(params.additionalProperty);
    path = path ? `${path}.${extra}` : extra;
    return invalidRequest(`Unrecognized request argument supplied: ${path}`, path, 'invalid_value');
  }
  const where = path || 'body';
  return invalidRequest(`Invalid value for '${where}': ${first.message ?? 'invalid'}.`, path || null, 'invalid_value');
}

/** `/messages/3/role` → `messages[3].role` */
export function instancePathToParam(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, segment) => (/^\d+$/.test(segment) ? `${acc}[${segment}]` : acc ? `${acc}.${segment}` : segment), '');
}
