/**
 * The one error catalogue. Every failure the gateway reports is a GatewayError built by one of the
 * constructors in `errors` below, each binding a wording to its `error.code` and status; each dialect
 * renders it in its own envelope (`{error:{message,type,param,code}}` for chat/responses/images/
 * videos, Anthropic's `{type:"error",error:{type,message}}` shape for messages), and mid-stream as an
 * error event. docs/errors.md lists the codes for humans; test/core/error-catalogue.test.ts keeps
 * that list and `CODE_STATUSES` the same. In the spirit of Fastify's `lib/errors.js`
 * (https://github.com/fastify/fastify/blob/main/lib/errors.js): call sites name an error, never a
 * status.
 */
import { redactProviderMessage } from './provider-message.ts';

export type ErrorType = 'invalid_request_error' | 'authentication_error' | 'insufficient_quota_error' | 'permission_error' | 'rate_limit_error' | 'api_error';

/** The statuses the gateway answers an error with. */
export const ERROR_STATUSES = [400, 401, 402, 403, 404, 405, 408, 409, 413, 415, 429, 431, 500, 502, 503] as const;
export type ErrorStatus = (typeof ERROR_STATUSES)[number];

/**
 * Every stable `error.code` and the statuses it may take. A code with two statuses lists both
 * (`upstream_error` is the provider's verdict on the request as a 400, or a failure the client cannot
 * fix as a 502); which one an error takes is fixed by its constructor in `errors`.
 */
export const CODE_STATUSES = {
  invalid_json: [400],
  // 408: the request took too long to arrive.
  invalid_value: [400, 408],
  missing_required_parameter: [400],
  unsupported_parameter: [400],
  unsupported_media_type: [415],
  // 431: the headers rather than the body.
  request_too_large: [413, 431],
  not_found: [404],
  method_not_allowed: [405],
  model_not_found: [404],
  missing_api_key: [401],
  invalid_api_key: [401],
  insufficient_scope: [403],
  invalid_signature: [403],
  url_expired: [403],
  insufficient_quota: [402],
  // One code per limit of docs/limits.md, so that a client (and its operator) knows which one it hit.
  requests_per_minute_exceeded: [429],
  tokens_per_minute_exceeded: [429],
  concurrent_requests_exceeded: [429],
  daily_spend_limit_exceeded: [429],
  monthly_spend_limit_exceeded: [429],
  spend_limit_exceeded: [429],
  // The limit counters (Redis) cannot be reached and limits.on_store_failure is `closed`.
  limits_unavailable: [503],
  // The server's own bounds on open connections and buffered bodies (docs/security.md).
  server_busy: [503],
  idempotency_key_in_use: [409],
  idempotency_key_reused: [409],
  idempotency_not_replayable: [409],
  invalid_state: [409],
  upstream_error: [400, 502],
  upstream_rate_limited: [429],
  upstream_timeout: [502],
  // 503: the provider said it is overloaded; 502: it could not be reached, or the call was cancelled.
  upstream_unavailable: [502, 503],
  // A long operation (a video generation) that the provider itself cancelled.
  cancelled_upstream: [409],
  storage_unavailable: [503],
  internal_error: [500],
} as const satisfies Readonly<Record<string, readonly ErrorStatus[]>>;

export type ErrorCode = keyof typeof CODE_STATUSES;

/** The statuses `code` may take. */
export type StatusOf<Code extends ErrorCode> = (typeof CODE_STATUSES)[Code][number];

export function errorTypeForStatus(status: ErrorStatus): ErrorType {
  switch (status) {
    case 400:
    case 404:
    case 405:
    case 408:
    case 409:
    case 413:
    case 415:
    case 431:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'insufficient_quota_error';
    case 403:
      return 'permission_error';
    case 429:
      return 'rate_limit_error';
    case 500:
    case 502:
    case 503:
      return 'api_error';
    default: {
      const unknown: never = status;
      throw new Error(`no error type for status ${String(unknown)}`);
    }
  }
}

/** What an error carries besides its code, status and message. */
interface ErrorFacts {
  readonly param?: string | null;
  /** True when another endpoint (or a later retry) may succeed: drives provider fallback. */
  readonly retryable?: boolean;
  /**
   * Whether the client's own retry may succeed, when it differs from `retryable`: another endpoint
   * may serve a request that no retry of the same one will (an exhausted provider account).
   */
  readonly clientMayRetry?: boolean;
  /** Seconds the client should wait, sent as Retry-After. */
  readonly retryAfterSeconds?: number;
  readonly cause?: unknown;
}

/**
 * One error: a code with a status it may take, so that a status the code's row does not list does
 * not compile. The only error without a code is a request refused while the server drains.
 */
export type ErrorSpec = (
  | { [Code in ErrorCode]: { readonly code: Code; readonly status: StatusOf<Code>; readonly message: string } }[ErrorCode]
  | { readonly code: null; readonly status: 503; readonly message: string }
) &
  ErrorFacts;

export class GatewayError extends Error {
  readonly status: ErrorStatus;
  readonly type: ErrorType;
  readonly code: ErrorCode | null;
  readonly param: string | null;
  readonly retryable: boolean;
  readonly clientMayRetry: boolean;
  readonly retryAfterSeconds: number | undefined;

  constructor(spec: ErrorSpec) {
    super(spec.message, { cause: spec.cause });
    this.name = 'GatewayError';
    this.status = spec.status;
    this.type = errorTypeForStatus(spec.status);
    this.code = spec.code;
    this.param = spec.param ?? null;
    this.retryable = spec.retryable ?? false;
    this.clientMayRetry = spec.clientMayRetry ?? this.retryable;
    this.retryAfterSeconds = spec.retryAfterSeconds;
  }

  /** The envelope every dialect but messages sends. */
  toEnvelope(): ErrorEnvelope {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export interface ErrorEnvelope {
  error: { message: string; type: ErrorType; param: string | null; code: string | null };
}

/** A catalogue entry: the wording's variable parts in, the error out. */
const entry =
  <Args extends unknown[]>(build: (...args: Args) => ErrorSpec) =>
  (...args: Args): GatewayError =>
    new GatewayError(build(...args));

/** The limits a key or an organization may carry (docs/limits.md). */
export type LimitName = 'requests_per_minute' | 'tokens_per_minute' | 'concurrent_requests' | 'spend_per_day' | 'spend_per_month' | 'spend_total';

const LIMIT_CODES = {
  requests_per_minute: 'requests_per_minute_exceeded',
  tokens_per_minute: 'tokens_per_minute_exceeded',
  concurrent_requests: 'concurrent_requests_exceeded',
  spend_per_day: 'daily_spend_limit_exceeded',
  spend_per_month: 'monthly_spend_limit_exceeded',
  spend_total: 'spend_limit_exceeded',
} as const satisfies Record<LimitName, ErrorCode>;

const LIMIT_WORDING: Record<LimitName, string> = {
  requests_per_minute: 'The requests-per-minute limit',
  tokens_per_minute: 'The tokens-per-minute limit',
  concurrent_requests: 'The concurrent-requests limit',
  spend_per_day: 'The daily spend limit',
  spend_per_month: 'The monthly spend limit',
  spend_total: 'The spend limit',
};

/** `: <the provider's message>`, or nothing when it gave none. */
/** The provider's own words after ours, without what only the operator should read (provider-message.ts). */
const providerSays = (message: string | undefined): string => (message ? `: ${redactProviderMessage(message)}` : '');

/** What `notFound` can name. */
export type NotFoundKind =
  | 'Organization'
  | 'Account'
  | 'User'
  | 'Invitation'
  | 'API key'
  | 'Response'
  | 'Video job'
  | 'Webhook endpoint'
  | 'Stored request'
  | 'Output file'
  | 'Job';

export const errors = {
  // The request as HTTP: framework failures before any route logic ran.
  invalidJson: entry(() => ({ code: 'invalid_json', status: 400, message: 'The request body is not valid JSON.' })),
  unsupportedMediaType: entry((contentType: string | undefined) => ({
    code: 'unsupported_media_type',
    status: 415,
    message: `Unsupported Content-Type: ${contentType ?? 'none'}. Send application/json.`,
  })),
  contentLengthMismatch: entry(() => ({ code: 'invalid_value', status: 400, message: 'The Content-Length header does not match the body.' })),
  malformedUrl: entry(() => ({ code: 'invalid_value', status: 400, message: 'The request URL is malformed.' })),
  notHttp: entry(() => ({ code: 'invalid_value', status: 400, message: 'The request is not valid HTTP.' })),
  requestTimedOut: entry(() => ({ code: 'invalid_value', status: 408, message: 'The request took too long to arrive.' })),
  /** A client error the framework raised that no entry above describes. */
  requestNotProcessable: entry((status: StatusOf<'invalid_value'>) => ({ code: 'invalid_value', status, message: 'The request could not be processed.' })),
  /** A path segment over the router's length limit (an id of hundreds of characters). */
  pathSegmentTooLong: entry((maxLength: number) => ({
    code: 'invalid_value',
    status: 400,
    message: `A path segment (such as an id) is longer than ${maxLength} characters.`,
  })),
  jsonTooDeep: entry((maxDepth: number) => ({
    code: 'invalid_value',
    status: 400,
    message: `The request body nests arrays and objects deeper than ${maxDepth} levels.`,
  })),
  /** Too many connections or too many body bytes in flight (docs/security.md): retry shortly. */
  serverBusy: entry((what: string, retryAfterSeconds: number) => ({
    code: 'server_busy',
    status: 503,
    message: `The server is busy (${what}); retry the request shortly.`,
    retryable: true,
    retryAfterSeconds,
  })),
  bodyTooLarge: entry(() => ({ code: 'request_too_large', status: 413, message: 'The request body is too large.' })),
  headersTooLarge: entry(() => ({ code: 'request_too_large', status: 431, message: 'The request headers are too large.' })),
  /** `hint`: the likely base-URL mistake behind the path, when one is recognised (server/path-hint.ts). */
  unknownPath: entry((method: string, path: string, hint?: string) => ({
    code: 'not_found',
    status: 404,
    message: `Unknown path ${method} ${path}.${hint === undefined ? '' : ` ${hint}`}`,
  })),
  methodNotAllowed: entry((method: string, path: string) => ({
    code: 'method_not_allowed',
    status: 405,
    message: `Method ${method} is not allowed on ${path}.`,
  })),
  /** No code: nothing is wrong with the request, and the SDKs retry it (on another instance). */
  shuttingDown: entry(() => ({ code: null, status: 503, message: 'The server is shutting down; retry the request.', retryable: true })),

  // Limits of a key or its organization (docs/limits.md).
  limitExceeded: entry((limit: LimitName, holder: 'key' | 'organization', retryAfterSeconds: number) => ({
    code: LIMIT_CODES[limit],
    status: 429,
    message: `${LIMIT_WORDING[limit]} of this ${holder === 'key' ? 'API key' : "API key's organization"} is reached; retry after ${retryAfterSeconds} s.`,
    retryAfterSeconds,
  })),
  limitsUnavailable: entry((cause: unknown) => ({
    code: 'limits_unavailable',
    status: 503,
    message: 'The limits of this API key cannot be checked right now; retry the request.',
    retryable: true,
    retryAfterSeconds: 1,
    cause,
  })),

  // The request's content.
  missingParameter: entry((param: string, alternative?: string) => ({
    code: 'missing_required_parameter',
    status: 400,
    message: `Missing required parameter: '${param}'${alternative === undefined ? '' : ` (or '${alternative}')`}.`,
    param,
  })),
  unrecognizedArgument: entry((param: string) => ({
    code: 'invalid_value',
    status: 400,
    message: `Unrecognized request argument supplied: ${param}`,
    param,
  })),
  /** A schema rule's failure; `reason` is the validator's. */
  schemaViolation: entry((param: string | null, reason: string) => ({
    code: 'invalid_value',
    status: 400,
    message: `Invalid value for '${param ?? 'body'}': ${reason}.`,
    param,
  })),
  /** A rule of the route's own (a combination, a format, a range); `message` says which. */
  invalidValue: entry((param: string | null, message: string) => ({ code: 'invalid_value', status: 400, message, param })),
  unsupportedParameter: entry((param: string, message: string = `${param} is not supported by this model`) => ({
    code: 'unsupported_parameter',
    status: 400,
    message,
    param,
  })),
  /** What policy rejected: an unsupported parameter or value, or a value over a model's limit. */
  policyViolation: entry((code: 'unsupported_parameter' | 'invalid_value', param: string, message: string) => ({ code, status: 400, message, param })),
  modelNotFound: entry((model: string) => ({
    code: 'model_not_found',
    status: 404,
    message: `The model '${model}' does not exist or you do not have access to it.`,
    param: 'model',
  })),
  /**
   * A webhook URL whose host is or resolves to a loopback, private or other non-public address
   * (src/webhooks/addresses.ts); also the reason recorded for a delivery refused at connection time,
   * where `param` is null.
   */
  webhookAddressRefused: entry((param: string | null, host: string, address: string) => ({
    code: 'invalid_value',
    status: 400,
    message:
      `The webhook host '${host}' ${host.replace(/^\[|\]$/g, '') === address ? 'is' : 'resolves to'} ${address}, which is not a public address: webhooks are not sent to ` +
      'loopback, private, link-local or other non-public addresses unless the operator sets webhooks.allow_private_addresses.',
    param,
  })),
  notFound: entry((kind: NotFoundKind, id?: string) => ({
    code: 'not_found',
    status: 404,
    message: `${kind}${id === undefined ? '' : ` '${id}'`} not found`,
  })),

  // Credentials and credit.
  missingApiKey: entry(() => ({
    code: 'missing_api_key',
    status: 401,
    message: 'No API key provided. Send it as `Authorization: Bearer <API_KEY>` or in the `x-api-key` header.',
  })),
  invalidApiKey: entry(() => ({ code: 'invalid_api_key', status: 401, message: 'Invalid API key.' })),
  revokedApiKey: entry(() => ({ code: 'invalid_api_key', status: 401, message: 'This API key has been revoked.' })),
  missingAdminKey: entry(() => ({
    code: 'missing_api_key',
    status: 401,
    message: 'The admin API needs `Authorization: Bearer <GATEWAY_ADMIN_KEY>`.',
  })),
  invalidAdminKey: entry(() => ({ code: 'invalid_api_key', status: 401, message: 'Invalid admin key.' })),
  insufficientScope: entry((scope: string) => ({
    code: 'insufficient_scope',
    status: 403,
    message: `This API key does not have the '${scope}' scope required by this endpoint.`,
  })),
  /** A signed output URL (docs/outputs.md) whose signature does not match its path and expiry, or whose path names no plain file. */
  outputUrlInvalid: entry(() => ({
    code: 'invalid_signature',
    status: 403,
    message: 'This output URL is not valid: its signature does not match. Retrieve the stored request again for a fresh URL.',
  })),
  /** A signed output URL past its expiry, however often it was used before. */
  outputUrlExpired: entry(() => ({
    code: 'url_expired',
    status: 403,
    message: 'This output URL has expired. Retrieve the stored request again (GET /v1/outputs/{requestId}) for a fresh URL.',
  })),
  /** Amounts are decimal USD strings: what the owner has available, and what the request would hold. */
  insufficientQuota: entry((amounts: { readonly availableUsd: string; readonly neededUsd: string }) => ({
    code: 'insufficient_quota',
    status: 402,
    message:
      `Insufficient credit: this request needs ${amounts.neededUsd} USD held (the most it can cost; the unused part is returned when it ends), ` +
      `and the available balance is ${amounts.availableUsd} USD. Credit is added by the gateway's operator ` +
      '(`gateway credit add`, or POST /admin/v1/accounts/{id}/credit).',
  })),

  // Idempotency-Key conflicts; `param` is the header as the request presented it.
  idempotencyKeyInUse: entry((param: string) => ({
    code: 'idempotency_key_in_use',
    status: 409,
    message: 'A request with this Idempotency-Key is still in progress; retry once it has finished.',
    param,
  })),
  idempotencyKeyReused: entry((param: string) => ({
    code: 'idempotency_key_reused',
    status: 409,
    message: 'This Idempotency-Key was already used with a different request body.',
    param,
  })),
  idempotencyNotReplayable: entry((param: string) => ({
    code: 'idempotency_not_replayable',
    status: 409,
    message: 'The request with this Idempotency-Key succeeded, but its result (a stream, or larger than 300 KiB) cannot be replayed.',
    param,
  })),

  // The upstream provider: `retryable` follows its answer (see transport/upstream-errors.ts).
  upstreamRateLimited: entry((message: string | undefined, retryable: boolean, retryAfterSeconds: number | undefined) => ({
    code: 'upstream_rate_limited',
    status: 429,
    message: `The upstream provider is rate limiting requests${providerSays(message)}`,
    retryable,
    retryAfterSeconds,
  })),
  upstreamTimedOut: entry((message: string | undefined, retryable: boolean) => ({
    code: 'upstream_timeout',
    status: 502,
    message: `The upstream provider timed out${providerSays(message)}`,
    retryable,
  })),
  upstreamOverloaded: entry((message: string | undefined, retryable: boolean, retryAfterSeconds: number | undefined) => ({
    code: 'upstream_unavailable',
    status: 503,
    message: `The upstream provider is overloaded or unavailable${providerSays(message)}`,
    retryable,
    retryAfterSeconds,
  })),
  /** The provider's message may quote part of the gateway's key, so it is not passed on. */
  upstreamCredentialsRejected: entry((status: number, retryable: boolean) => ({
    code: 'upstream_error',
    status: 502,
    message: `The upstream provider rejected the gateway's credentials (status ${status}).`,
    retryable,
  })),
  /**
   * The operator's account at the provider has no quota, credit or spend left (docs/errors.md,
   * "Upstream errors"): not the client's rate limit (429) and not a fault a retry would lift (502).
   * Another endpoint, on another account, may serve the request, so routing falls back; the client
   * is told not to retry until the operator has acted.
   */
  upstreamAccountExhausted: entry((message: string | undefined) => ({
    code: 'upstream_unavailable',
    status: 503,
    message: `The upstream provider account of this gateway has no quota or credit left; the operator must top it up${providerSays(message)}`,
    retryable: true,
    clientMayRetry: false,
  })),
  upstreamTooLarge: entry((message: string | undefined, retryable: boolean) => ({
    code: 'request_too_large',
    status: 413,
    message: `The upstream provider rejected the request as too large${providerSays(message)}`,
    retryable,
  })),
  /** The provider judged the request itself invalid: the client can act on its message and param. */
  upstreamRejected: entry((message: string | undefined, param: string | null, retryable: boolean) => ({
    code: 'upstream_error',
    status: 400,
    message: `The upstream provider rejected the request${providerSays(message)}`,
    param,
    retryable,
  })),
  upstreamStatus: entry((status: number, message: string | undefined, retryable: boolean) => ({
    code: 'upstream_error',
    status: 502,
    message: `The upstream provider returned status ${status}${providerSays(message)}`,
    retryable,
  })),
  /** An error the provider reported inside a 200 (a stream event, a failed response). */
  upstreamReported: entry((message: string | undefined, retryable: boolean) => ({
    code: 'upstream_error',
    status: 502,
    message: `The upstream provider reported an error${providerSays(message)}`,
    retryable,
  })),
  /** `what`: the thing it sent that the gateway could not read ("a response body that is not valid JSON"). */
  malformedUpstream: entry((what: string, cause?: unknown) => ({
    code: 'upstream_error',
    status: 502,
    message: `The upstream provider sent ${what}.`,
    retryable: true,
    cause,
  })),
  upstreamEndedEarly: entry(() => ({
    code: 'upstream_error',
    status: 502,
    message: 'The upstream provider ended the response before it was complete.',
    retryable: true,
  })),
  /** Not retryable: the provider answered, with an error as its finish reason. */
  upstreamErrorFinish: entry((raw: string | null) => ({
    code: 'upstream_error',
    status: 502,
    message: `The upstream provider ended the response with an error${raw ? ` (${raw})` : ''}.`,
  })),
  /**
   * In a stream: the upstream went on past the request's max output tokens until what it delivered
   * cost more than the request's credit hold (docs/billing.md, "Money caps"); it is read no further.
   */
  holdExhausted: entry(() => ({
    code: 'upstream_error',
    status: 502,
    message: 'The upstream provider went on past the output this request allows, beyond what its credit hold covers; the stream was stopped.',
  })),
  /**
   * In a stream: it ran until shortly before its credit hold expires (docs/billing.md, "Money
   * caps"), a slow upstream or a client that reads slowly; it was settled for what it delivered.
   */
  streamOutlivedHold: entry(() => ({
    code: 'upstream_timeout',
    status: 502,
    message: 'The stream lasted longer than its credit hold allows; it was stopped and charged for what it delivered.',
  })),
  /** The client went away, so there is nothing to fall back to. */
  upstreamCancelled: entry((cause: unknown) => ({ code: 'upstream_unavailable', status: 502, message: 'The upstream request was cancelled.', cause })),
  /** A long operation the provider cancelled on its side (a video job ends `cancelled`, uncharged). */
  operationCancelledUpstream: entry(() => ({
    code: 'cancelled_upstream',
    status: 409,
    message: 'The upstream provider cancelled the operation; nothing was charged.',
  })),
  upstreamNoAnswer: entry((cause: unknown) => ({
    code: 'upstream_timeout',
    status: 502,
    message: 'The upstream provider did not answer in time.',
    retryable: true,
    cause,
  })),
  upstreamUnreachable: entry((cause: unknown) => ({
    code: 'upstream_unavailable',
    status: 502,
    message: 'The upstream provider could not be reached or closed the connection.',
    retryable: true,
    cause,
  })),
  /**
   * The model's configured provider does not implement the capability the request needs (`what`:
   * "text generation"): a configuration the operator must fix.
   */
  noProtocol: entry((modelId: string, what: string) => ({
    code: 'upstream_unavailable',
    status: 503,
    message: `The provider for '${modelId}' cannot serve ${what}.`,
  })),
  /** A job's prepared call whose credit hold expired or was settled elsewhere: it is not run. */
  holdNotOpen: entry(() => ({
    code: 'invalid_state',
    status: 409,
    message: 'The credit held for this call is no longer reserved; it was not run.',
  })),
  /** A job cancelled (or taken over by another instance) after its upstream answered: it is not charged. */
  workEnded: entry(() => ({
    code: 'invalid_state',
    status: 409,
    message: 'The work was cancelled, or taken over by another instance, before it was charged.',
  })),
  /** POST /v1/responses/{id}/cancel on a response that is no longer queued or in progress. */
  notCancellable: entry((what: string, id: string, status: string) => ({
    code: 'invalid_state',
    status: 409,
    message: `${what} '${id}' is ${status}; only a queued or in-progress one can be cancelled.`,
  })),
  /**
   * A job whose instance stopped after sending its work upstream: the upstream may have done (and
   * billed) it, so it is not retried; the client is not charged (docs/jobs.md).
   */
  jobInterrupted: entry(() => ({
    code: 'internal_error',
    status: 500,
    message: 'The instance running this job stopped after sending it upstream; it was ended without a charge. Submit it again.',
  })),
  /** A job's prepared call whose every planned route has left the config. */
  plannedRoutesGone: entry((modelId: string) => ({
    code: 'upstream_unavailable',
    status: 503,
    message: `No route of '${modelId}' that this call was planned on is configured any more.`,
  })),

  // The gateway itself.
  storageUnavailable: entry((cause: unknown) => ({
    code: 'storage_unavailable',
    status: 503,
    message: 'The storage backend is temporarily unavailable.',
    retryable: true,
    cause,
  })),
  /** GET /healthz's answer when its probe of the store fails. */
  storeProbeFailed: entry(() => ({ code: 'storage_unavailable', status: 503, message: 'The store is unavailable.', retryable: true })),
  internalError: entry((cause?: unknown) => ({
    code: 'internal_error',
    status: 500,
    message: 'The server had an error while processing your request.',
    cause,
  })),
};

/** Whether the store could not be reached (a transient fault, not a verdict on the work). */
export function isStoreUnavailable(error: unknown): boolean {
  return error instanceof GatewayError && error.code === 'storage_unavailable';
}
