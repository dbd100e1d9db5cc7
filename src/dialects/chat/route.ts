/**
 * POST /v1/chat/completions. The route only translates: the body is validated by the schema,
 * decoded to the canonical request, run through the metered-call core as text, and the result
 * rendered as a chat.completion (with the `x-gateway-cost-usd` header) or as chat.completion.chunk
 * events. An `Idempotency-Key` replays the completion with its cost header (http/idempotency.ts).
 */
import type { FastifyInstance } from 'fastify';
import { COST_HEADER, sendCompleted } from '../../http/completed-answer.ts';
import type { AppDeps } from '../../http/deps.ts';
import { sendEventStream } from '../../http/event-stream.ts';
import { withIdempotency } from '../../http/idempotency.ts';
import { rejectionRecorder } from '../../http/request-recording.ts';
import type { RouteModule } from '../../http/route-module.ts';
import { TEXT } from '../../pipeline/kinds/text.ts';
import { pipelineFor, type Pipeline } from '../../pipeline/pipeline.ts';
import { streamText } from '../../pipeline/text-stream.ts';
import { decodeChatRequest } from './decode.ts';
import { encodeChatCompletion } from './encode.ts';
import { ChatCompletionRequest, type ChatCompletionBody } from './schema.ts';
import { chatFrameEncoder } from './stream.ts';
import { callInput } from '../../http/call-input.ts';

export const chatRoutes: RouteModule = (app, deps) => registerChatRoutes(app, deps, pipelineFor(deps));

export function registerChatRoutes(app: FastifyInstance, deps: AppDeps, pipeline: Pipeline): void {
  app.addHook('onClose', () => pipeline.close());
  app.post<{ Body: ChatCompletionBody }>(
    '/v1/chat/completions',
    withIdempotency(
      deps,
      { route: 'chat', resultHeaders: [COST_HEADER], pipeline },
      {
        schema: {
          summary: 'Create a chat completion',
          tags: ['chat'],
          body: ChatCompletionRequest,
        },
        // Authentication before body validation: an unauthenticated caller learns nothing about the body.
        onRequest: deps.authenticator.require('chat'),
        onError: rejectionRecorder(pipeline, 'chat', deps.now),
      },
    ),
    async (request, reply) => {
      const input = callInput(request, reply, 'chat', decodeChatRequest(request.body));
      const canonical = input.request;
      if (!canonical.stream) {
        return sendCompleted(reply, await pipeline.complete(TEXT, input, encodeChatCompletion));
      }
      const run = await streamText(pipeline, input, encodeChatCompletion);
      return sendEventStream(reply, run.events, chatFrameEncoder(run, canonical.includeUsage === true));
    },
  );
}
