/**
 * Errors of the gpu-pool queue API (docs: https://docs.fal.ai/model-endpoints/queue):
 * `{"detail": "…"}`, or validation failures as `{"detail": [{"loc", "msg", "type"}]}`. The status
 * policy is the shared one (src/protocols/transport/upstream-errors.ts).
 */
import type { GatewayError } from '../../core/errors.ts';
import { bodyExcerpt, upstreamStatusError, type UpstreamHeaders } from '../transport/upstream-errors.ts';

export function parseQueueError(status: number, headers: UpstreamHeaders, bodyText: string): GatewayError {
  let message: string | undefined;
  try {
    message = detailMessage((JSON.parse(bodyText) as { detail?: unknown } | null)?.detail);
  } catch {
    message = bodyExcerpt(bodyText);
  }
  return upstreamStatusError({ status, headers, message: message ?? bodyExcerpt(bodyText) });
}

/** A `detail` (or a status's `error`) as one message; undefined when it says nothing readable. */
export function detailMessage(detail: unknown): string | undefined {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    const messages = detail.map((item: { msg?: unknown } | null) => item?.msg).filter((msg): msg is string => typeof msg === 'string');
    return messages.length === 0 ? undefined : messages.join('; ');
  }
  return undefined;
}
