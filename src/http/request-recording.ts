/**
 * Request log rows for requests the metered-call core never ran: refused before it (the body
 * schema, the dialect's decoding, an Idempotency-Key conflict) or answered from an idempotency
 * replay. Every request a key made is then in its history. Requests without an API key have no
 * owner to file them under and leave none.
 */
import type { FastifyReply, FastifyRequest, onErrorHookHandler } from 'fastify';
import type { AuthContext } from '../auth/context.ts';
import type { Pipeline } from '../pipeline/pipeline.ts';
import type { RequestEnd } from '../pipeline/request-log.ts';
import { toGatewayError } from './error-mapping.ts';

/**
 * A route's onError hook: the row of an authenticated request refused before the pipeline saw it.
 * A request handed to the core (http/call-input.ts) has its row written there, whatever failed.
 */
export function rejectionRecorder(pipeline: Pipeline, route: string, now: () => number): onErrorHookHandler {
  return (request, reply, error, done) => {
    if (!request.handedToCore) {
      // The error handler has not set the reply's status yet; the envelope's error has it.
      const answered = toGatewayError(error, request);
      recordAnswered(pipeline, now, request, reply, route, { status: 'failed', httpStatus: answered.status, errorCode: answered.code });
    }
    done();
  };
}

/** The row of a request answered without the pipeline: no model, no route, no usage, no cost. */
export function recordAnswered(
  pipeline: Pipeline,
  now: () => number,
  request: FastifyRequest,
  reply: FastifyReply,
  route: string,
  end: Pick<RequestEnd, 'status' | 'httpStatus' | 'errorCode' | 'output'>,
): void {
  const auth = request.auth as AuthContext | null;
  if (auth === null) return;
  const body = request.body as { stream?: unknown } | null | undefined;
  pipeline.recordRequest({
    requestId: request.gatewayRequestId,
    owner: auth.owner,
    keyId: auth.key.id,
    route,
    stream: typeof body === 'object' && body !== null && body.stream === true,
    createdAt: now() - Math.round(reply.elapsedTime),
    durationMs: reply.elapsedTime,
    ...end,
  });
}
