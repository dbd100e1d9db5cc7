/**
 * POST /v1/messages and POST /v1/messages/count_tokens (docs/messages.md), for clients of the
 * Messages API such as the official Anthropic SDK pointed at the gateway's root.
 *
 * - messages only translates, as chat does: the body is validated by the schema, decoded to the
 *   canonical request, run through the metered-call core as text, and rendered as a Message (with
 *   the `x-gateway-cost-usd` header) or as its event stream. An `Idempotency-Key` replays the
 *   Message with its cost header (http/idempotency.ts).
 * - count_tokens is local and free: the same body (with `max_tokens` optional) is decoded and
 *   measured with the local tokenizer (tokens/estimate.ts); no credit, no upstream call, no row.
 *
 * Both answer errors in the messages shape (error-body.ts).
 */
import type { FastifyInstance } from 'fastify';
import { COST_HEADER, sendCompleted } from '../../http/completed-answer.ts';
import type { AppDeps } from '../../http/deps.ts';
import { withIdempotency } from '../../http/idempotency.ts';
import { rejectionRecorder } from '../../http/request-recording.ts';
import type { RouteModule } from '../../http/route-module.ts';
import { TEXT } from '../../pipeline/kinds/text.ts';
import { pipelineFor, type Pipeline } from '../../pipeline/pipeline.ts';
import { requireUsableModel } from '../../pipeline/select.ts';
import { streamText } from '../../pipeline/text-stream.ts';
import { estimatePromptTokens } from '../../tokens/estimate.ts';
import { betasOf, decodeMessagesRequest } from './decode.ts';
import { encodeMessage } from './encode.ts';
import { messagesErrorBody } from './error-body.ts';
import { CountTokensRequest, CountTokensResult, MessagesRequest, type CountTokensBody, type MessagesBody } from './schema.ts';
import { sendMessagesStream } from './stream.ts';
import { callInput } from '../../http/call-input.ts';

/** The request log's and the idempotency records' name of the route. */
const ROUTE = 'messages';

export const messagesRoutes: RouteModule = (app, deps) => registerMessagesRoutes(app, deps, pipelineFor(deps));

export function registerMessagesRoutes(app: FastifyInstance, deps: AppDeps, pipeline: Pipeline): void {
  app.addHook('onClose', () => pipeline.close());
  // Authentication before body validation: an unauthenticated caller learns nothing about the body.
  const authenticate = deps.authenticator.require('chat');
  const config = { errorBody: messagesErrorBody };

  app.post<{ Body: MessagesBody }>(
    '/v1/messages',
    withIdempotency(
      deps,
      { route: ROUTE, resultHeaders: [COST_HEADER], pipeline },
      {
        schema: { summary: 'Create a message', tags: ['messages'], body: MessagesRequest },
        onRequest: authenticate,
        onError: rejectionRecorder(pipeline, ROUTE, deps.now),
        config,
      },
    ),
    async (request, reply) => {
      const input = callInput(request, reply, ROUTE, decodeMessagesRequest(request.body, betasOf(request.headers['anthropic-beta'])));
      if (!input.request.stream) return sendCompleted(reply, await pipeline.complete(TEXT, input, encodeMessage));
      return sendMessagesStream(reply, await streamText(pipeline, input, encodeMessage));
    },
  );

  app.post<{ Body: CountTokensBody }>(
    '/v1/messages/count_tokens',
    {
      schema: {
        summary: 'Count the input tokens of a message, locally and free',
        tags: ['messages'],
        body: CountTokensRequest,
        response: { 200: CountTokensResult },
      },
      onRequest: authenticate,
      config,
    },
    async (request) => {
      const decoded = decodeMessagesRequest(request.body).request;
      // The same 404 as /v1/messages for a model the key may not use: counting calls nothing, but it
      // must not tell a key about models it cannot reach.
      requireUsableModel(decoded, request.auth, deps.catalog, TEXT.category);
      // The estimate always counts the reply's priming tokens, so it is at least 1.
      return { input_tokens: estimatePromptTokens(decoded) };
    },
  );
}
