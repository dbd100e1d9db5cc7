/**
 * POST /v1/responses, GET /v1/responses/{id} and POST /v1/responses/{id}/cancel
 * (docs/responses.md), for clients of the OpenAI Responses API such as the official OpenAI SDK
 * pointed at `{gateway}/v1`.
 *
 * - POST only translates, as chat does: the body is validated by the schema, decoded to the
 *   canonical request, run through the metered-call core as text, and rendered as a Response object
 *   (with the `x-gateway-cost-usd` header) or as its event stream. An `Idempotency-Key` replays the
 *   object with its cost header (http/idempotency.ts).
 * - `background: true` validates, quotes and holds credit in the request, then queues the call as a
 *   job (its hold in the job's name) and answers the queued object at once, as JSON even for a
 *   stream; a worker of any instance completes it (background.ts, src/jobs/).
 * - GET reads the job of a background response, else the request log: a response's id is its
 *   request id (response-id.ts), and the row keeps the object the client got (for a stream, the
 *   final object) for 24 hours. Only the key's owner sees it; anyone else gets the same 404 as for
 *   an unknown id.
 * - cancel ends a queued or in-progress background response as `cancelled`, refunds its hold and
 *   aborts its upstream call wherever it runs; on an ended one it is a 409 `invalid_state`.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AuthContext } from '../../auth/context.ts';
import { errors } from '../../core/errors.ts';
import { COST_HEADER, sendCompleted } from '../../http/completed-answer.ts';
import type { AppDeps } from '../../http/deps.ts';
import { withIdempotency } from '../../http/idempotency.ts';
import { rejectionRecorder } from '../../http/request-recording.ts';
import type { RouteModule } from '../../http/route-module.ts';
import { TEXT } from '../../pipeline/kinds/text.ts';
import { pipelineFor, type Pipeline } from '../../pipeline/pipeline.ts';
import { streamText } from '../../pipeline/text-stream.ts';
import { decodeResponsesRequest } from './decode.ts';
import { encodeResponse } from './encode.ts';
import { requestIdOf, responseIdOf } from './response-id.ts';
import { ResponsesRequest, type ResponsesBody } from './schema.ts';
import { sendResponsesStream } from './stream.ts';
import { callInput } from '../../http/call-input.ts';
import { meteredJobHandler, submitMetered } from '../../jobs/metered-job.ts';
import { holdSlotForJob } from '../../http/limits.ts';
import { polledResponse, RESPONSE_JOBS } from './background.ts';

/** The request log's and the idempotency records' name of the route. */
const ROUTE = 'responses';

export const responsesRoutes: RouteModule = (app, deps) => registerResponsesRoutes(app, deps, pipelineFor(deps));

export function registerResponsesRoutes(app: FastifyInstance, deps: AppDeps, pipeline: Pipeline): void {
  app.addHook('onClose', () => pipeline.close());
  deps.jobs.runner.register(meteredJobHandler(pipeline, RESPONSE_JOBS));
  // Authentication before body validation: an unauthenticated caller learns nothing about the body.
  const authenticate = deps.authenticator.require('responses');

  app.post<{ Body: ResponsesBody }>(
    '/v1/responses',
    withIdempotency(
      deps,
      { route: ROUTE, resultHeaders: [COST_HEADER], pipeline },
      {
        schema: { summary: 'Create a response', tags: ['responses'], body: ResponsesRequest },
        onRequest: authenticate,
        onError: rejectionRecorder(pipeline, ROUTE, deps.now),
      },
    ),
    async (request, reply) => {
      const input = callInput(request, reply, ROUTE, decodeResponsesRequest(request.body));
      if (request.body.background === true) {
        const job = await submitMetered(pipeline, deps.jobs, RESPONSE_JOBS, {
          ...input,
          jobId: responseIdOf(input.requestId),
          context: request.body,
        });
        await holdSlotForJob(request, job.id, Math.max(1, job.expiresAt - deps.now()));
        return reply.send(job.result);
      }
      if (!input.request.stream) return sendCompleted(reply, await pipeline.complete(TEXT, input, encodeResponse));
      return sendResponsesStream(reply, await streamText(pipeline, input, encodeResponse));
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/responses/:id',
    {
      schema: { summary: 'Retrieve a response', tags: ['responses'], params: Type.Object({ id: Type.String() }) },
      onRequest: authenticate,
    },
    async (request) => {
      const id = request.params.id;
      const job = await deps.jobs.find(RESPONSE_JOBS.jobKind, id, request.auth.owner);
      if (job !== null) return polledResponse(job);
      const output = await storedResponse(deps, pipeline, request.auth, id);
      if (output === undefined) throw errors.notFound('Response', id);
      return output;
    },
  );

  app.post<{ Params: { id: string } }>(
    '/v1/responses/:id/cancel',
    {
      schema: { summary: 'Cancel a background response', tags: ['responses'], params: Type.Object({ id: Type.String() }) },
      onRequest: authenticate,
    },
    async (request) => {
      const id = request.params.id;
      const outcome = await deps.jobs.cancel(RESPONSE_JOBS.jobKind, id, request.auth.owner);
      if (outcome === null) {
        // A response answered in its request is not cancellable either; one of another owner is not found.
        const answered = await storedResponse(deps, pipeline, request.auth, id);
        if (answered !== undefined) throw errors.notCancellable('Response', id, String((answered as { status?: unknown }).status));
        throw errors.notFound('Response', id);
      }
      if (!outcome.cancelled) throw errors.notCancellable('Response', id, outcome.job.status);
      return outcome.job.result;
    },
  );
}

/**
 * The stored response object with this id, when the caller's owner made it and it has not expired.
 * Rows are written in short batches (pipeline/request-log.ts): a lookup that misses flushes them once
 * and looks again, so a response can be retrieved as soon as it has been answered.
 */
async function storedResponse(deps: AppDeps, pipeline: Pipeline, auth: AuthContext, id: string): Promise<object | undefined> {
  const requestId = requestIdOf(id);
  if (requestId === undefined) return undefined;
  let row = await deps.store.getRequest(requestId);
  if (row === null) {
    await pipeline.flush();
    row = await deps.store.getRequest(requestId);
  }
  if (row === null || row.route !== ROUTE || row.expiresAt <= deps.now()) return undefined;
  if (row.owner.kind !== auth.owner.kind || row.owner.id !== auth.owner.id) return undefined;
  // A refused request has no output; an idempotent replay's row holds the original object, whose id is not this one.
  const output = row.output;
  if (typeof output !== 'object' || output === null || (output as { id?: unknown }).id !== id) return undefined;
  return output;
}
