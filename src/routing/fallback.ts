/**
 * When a failed attempt may move on to the next route (docs/chat-completions.md, "Model
 * resolution"): connect errors, timeouts, 429 and 5xx — the errors protocols mark `retryable` — and
 * only while nothing has been sent to the client, which the caller guarantees by asking before it
 * forwards anything.
 */
import { errors, GatewayError } from '../core/errors.ts';

export function mayFallBack(error: GatewayError, attemptIndex: number, attempts: number, signal: AbortSignal): boolean {
  return error.retryable && attemptIndex + 1 < attempts && !signal.aborted;
}

/** Any failure of a protocol call as a gateway error; a non-gateway throw is a bug, not an upstream fault. */
export function asGatewayError(error: unknown): GatewayError {
  return error instanceof GatewayError ? error : errors.internalError(error);
}
