/**
 * A messages-dialect error: the gateway's envelope (docs/errors.md) with Anthropic's top-level
 * `"type": "error"` beside it, as the Messages API's own errors carry it
 * (https://docs.anthropic.com/en/api/errors). The official SDK reads `error.message` and
 * `error.type` from it and reports the status; clients that check `type` see an error.
 */
import type { ErrorEnvelope, GatewayError } from '../../core/errors.ts';

export interface MessagesErrorBody extends ErrorEnvelope {
  readonly type: 'error';
}

export function messagesErrorBody(error: GatewayError): MessagesErrorBody {
  return { type: 'error', ...error.toEnvelope() };
}
