/**
 * The answer of a call completed in one piece, the same on every dialect's JSON route: the
 * rendered body as the core serialized it, with the exact charge in `x-gateway-cost-usd`
 * (docs/billing.md). An Idempotency-Key replays the header with the body.
 */
import type { FastifyReply } from 'fastify';
import { JsonPieces } from '../core/json-pieces.ts';
import { formatUsd, type Picos } from '../core/money.ts';

export const COST_HEADER = 'x-gateway-cost-usd';
/** What Fastify sets for a body it serializes itself; the body arrives serialized. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function sendCompleted(
  reply: FastifyReply,
  completed: { readonly json: string | JsonPieces; readonly settlement: { readonly charged: Picos } },
): FastifyReply {
  reply.header(COST_HEADER, formatUsd(completed.settlement.charged)).type(JSON_CONTENT_TYPE);
  // Pieces are sent as a stream body, whose length Fastify does not count.
  if (completed.json instanceof JsonPieces) reply.header('content-length', completed.json.byteLength);
  return reply.send(completed.json);
}
