/**
 * POST /v1/images/generations and POST /v1/images/edits. The routes only translate: a body
 * (JSON, or multipart for edits) is validated by the schema, decoded to the canonical image
 * request, run through the metered-call core as the image kind, and rendered in the OpenAI Images
 * shape with the `x-gateway-cost-usd` header. An `Idempotency-Key` replays the result with its cost
 * header (http/idempotency.ts).
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../core/errors.ts';
import { callInput } from '../../http/call-input.ts';
import { COST_HEADER, sendCompleted } from '../../http/completed-answer.ts';
import type { AppDeps } from '../../http/deps.ts';
import { withIdempotency } from '../../http/idempotency.ts';
import { rejectionRecorder } from '../../http/request-recording.ts';
import type { RouteModule } from '../../http/route-module.ts';
import { IMAGE } from '../../pipeline/kinds/image.ts';
import { pipelineFor, type Pipeline } from '../../pipeline/pipeline.ts';
import { decodeImageEdit, decodeImageGeneration, type DecodedImageRequest } from './decode.ts';
import { encodeImageResult } from './encode.ts';
import { MULTIPART_LIMITS, readMultipartEdit } from './multipart.ts';
import { ImageEditRequest, ImageGenerationRequest, type ImageEditBody, type ImageGenerationBody } from './schema.ts';

export const imagesRoutes: RouteModule = (app, deps) => registerImageRoutes(app, deps, pipelineFor(deps));

export async function registerImageRoutes(app: FastifyInstance, deps: AppDeps, pipeline: Pipeline): Promise<void> {
  app.addHook('onClose', () => pipeline.close());
  const answer = async (request: FastifyRequest, reply: FastifyReply, decoded: DecodedImageRequest) => {
    const input = callInput(request, reply, 'images', decoded);
    if (input.request.responseFormat === 'url') {
      throw errors.unsupportedParameter('response_format', "response_format 'url' is not available on this gateway yet: send response_format: 'b64_json'.");
    }
    return sendCompleted(reply, await pipeline.complete(IMAGE, input, encodeImageResult));
  };

  app.post<{ Body: ImageGenerationBody }>(
    '/v1/images/generations',
    withIdempotency(
      deps,
      { route: 'images', resultHeaders: [COST_HEADER], pipeline },
      {
        schema: { summary: 'Generate images', tags: ['images'], body: ImageGenerationRequest },
        onRequest: deps.authenticator.require('images'),
        onError: rejectionRecorder(pipeline, 'images', deps.now),
      },
    ),
    (request, reply) => answer(request, reply, decodeImageGeneration(request.body)),
  );

  // Multipart parsing is scoped to the edits route: every other route still answers 415 to it.
  await app.register(async (scope) => {
    await scope.register(multipart, { limits: MULTIPART_LIMITS, throwFileSizeLimit: true });
    scope.post<{ Body: ImageEditBody }>(
      '/v1/images/edits',
      {
        ...withIdempotency(
          deps,
          { route: 'image-edits', resultHeaders: [COST_HEADER], pipeline },
          {
            schema: {
              summary: 'Edit an image',
              description: 'Takes application/json (base64 files) or multipart/form-data (binary files); docs/images.md.',
              tags: ['images'],
              consumes: ['application/json', 'multipart/form-data'],
              body: ImageEditRequest,
            },
            onRequest: deps.authenticator.require('images'),
            onError: rejectionRecorder(pipeline, 'images', deps.now),
          },
        ),
        // Before validation: the multipart form becomes the JSON form's object.
        preValidation: async (request: FastifyRequest) => {
          if (request.isMultipart()) request.body = await readMultipartEdit(request);
        },
      },
      (request, reply) => answer(request, reply, decodeImageEdit(request.body)),
    );
  });
}
