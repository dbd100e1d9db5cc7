/**
 * Request log rows for requests the metered-call core never ran: refused before it (the body
 * schema, the dialect's decoding, an Idempotency-Key conflict) or answered from an idempotency
 * replay. Every request a key made is then in its history. Requests without an API key have no
 * owner to file them under and leave none.
 */
import type { FastifyReply, FastifyRequest, onErrorHookHandler } from 'fastify';
import type { AuthContext } from '../auth/context.ts';
import { GatewayError } from '../core/errors.ts';
import type { Outcome, Pipeline } from '../pipeline/pipeline.ts';
import { requestLogRecord } from '../pipeline/request-log.ts';
import { toGatewayError } from './error-mapping.ts';

/**
 * A route's onError hook: the row of an authenticated request refused before the pipeline saw it.
 * Failures the pipeline recorded itself are not recorded twice.
 */
export function rejectionRecorder(pipeline: Pipeline, route: string, now: () => number): onErrorHookHandler {
  return (request, reply, error, done) => {
    if (!(error instanceof GatewayError && pipeline.hasRecorded(error))) {
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
  outcome: Pick<Outcome, 'status' | 'httpStatus' | 'errorCode' | 'output'>,
): void {
  const auth = request.auth as AuthContext | null;
  if (auth === null) return;
  const body = request.body as { stream?: unknown } | null | undefined;
  pipeline.recordRow(
    requestLogRecord({
      requestId: request.gatewayRequestId,
      owner: auth.owner,
      keyId: auth.key.id,
      route,
      stream: typeof body === 'object' && body !== null && body.stream === true,
      createdAt: now() - Math.round(reply.elapsedTime),
      durationMs: reply.elapsedTime,
      ...outcome,
    }),
  );
}
