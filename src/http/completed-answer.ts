/**
 * The answer of a call completed in one piece, the same on every dialect's JSON route: the
 * rendered body as the core serialized it, with the exact charge in `x-gateway-cost-usd`
 * (docs/billing.md). An Idempotency-Key replays the header with the body.
 */
import type { FastifyReply } from 'fastify';
import { formatUsd, type Picos } from '../core/money.ts';

export const COST_HEADER = 'x-gateway-cost-usd';
/** What Fastify sets for a body it serializes itself; the body arrives serialized. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function sendCompleted(
  reply: FastifyReply,
  completed: { readonly json: string | Buffer; readonly settlement: { readonly charged: Picos } },
): FastifyReply {
  return reply.header(COST_HEADER, formatUsd(completed.settlement.charged)).type(JSON_CONTENT_TYPE).send(completed.json);
}
