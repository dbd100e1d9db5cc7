/**
 * The one error catalogue. Every failure the gateway reports is a GatewayError; each dialect renders
 * it in its own envelope (the spec's `{error:{message,type,param,code}}` for chat/responses/images/
 * videos, Anthropic's `{type:"error",error:{type,message}}` shape for messages), and mid-stream as an
 * error event. The status → type mapping is fixed by the design notes.
 */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'insufficient_quota_error'
  | 'permission_error'
  | 'rate_limit_error'
  | 'api_error';

/** Stable `error.code` values. Document any new one in docs/errors.md. */
export type ErrorCode =
  | 'invalid_json'
  | 'invalid_value'
  | 'missing_required_parameter'
  | 'unsupported_parameter'
  | 'unsupported_media_type'
  | 'request_too_large'
  | 'model_not_found'
  | 'not_found'
  | 'method_not_allowed'
  | 'invalid_api_key'
  | 'missing_api_key'
  | 'insufficient_scope'
  | 'insufficient_quota'
  | 'rate_limit_exceeded'
  | 'idempotency_key_in_use'
  | 'idempotency_key_reused'
  | 'idempotency_not_replayable'
  | 'invalid_state'
  | 'upstream_error'
  | 'upstream_rate_limited'
  | 'upstream_timeout'
  | 'upstream_unavailable'
  | 'storage_unavailable'
  | 'internal_error';

export function errorTypeForStatus(status: number): ErrorType {
  switch (status) {
    case 401: return 'authentication_error';
    case 402: return 'insufficient_quota_error';
    case 403: return 'permission_error';
    case 429: return 'rate_limit_error';
    default: return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

export interface GatewayErrorOptions {
  code?: ErrorCode | null;
  param?: string | null;
  /** True when another endpoint (or a later retry) may succeed: drives provider fallback. */
  retryable?: boolean;
  /** Seconds the client should wait, sent as Retry-After. */
  retryAfterSeconds?: number;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: ErrorCode | null;
  readonly param: string | null;
  readonly retryable: boolean;
  readonly retryAfterSeconds: number | undefined;

  constructor(status: number, message: string, options: GatewayErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'GatewayError';
    this.status = status;
    this.type = errorTypeForStatus(status);
    this.code = options.code ?? null;
    this.param = options.param ?? null;
    this.retryable = options.retryable ?? false;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** The spec's envelope. */
  toEnvelope(): ErrorEnvelope {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export interface ErrorEnvelope {
  error: { message: string; type: ErrorType; param: string | null; code: string | null };
}

export const invalidRequest = (message: string, param: string | null = null, code: ErrorCode = 'invalid_value') =>
  new GatewayError(400, message, { code, param });

export const unsupportedParameter = (param: string, message?: string) =>
  new GatewayError(400, message ?? `${param} is not supported by this model`, { code: 'unsupported_parameter', param });

export const modelNotFound = (model: string) =>
  new GatewayError(404, `The model '${model}' does not exist or you do not have access to it.`, {
    code: 'model_not_found',
    param: 'model',
  });

export const notFound = (what: string) => new GatewayError(404, `${what} not found`, { code: 'not_found' });

export const authenticationFailed = (message = 'Invalid API key.', code: ErrorCode = 'invalid_api_key') =>
  new GatewayError(401, message, { code });

export const permissionDenied = (message: string) => new GatewayError(403, message, { code: 'insufficient_scope' });

export const insufficientQuota = () =>
  new GatewayError(402, 'Insufficient credit for this request. Add credit to continue.', { code: 'insufficient_quota' });

export const internalError = (cause?: unknown) =>
  new GatewayError(500, 'The server had an error while processing your request.', { code: 'internal_error', cause });

export function isGatewayError(value: unknown): value is GatewayError {
  return value instanceof GatewayError;
}
