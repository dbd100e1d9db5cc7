/**
 * POST /v1/images/generations and POST /v1/images/edits. The routes only translate: a body
 * (JSON, or multipart for edits) is validated by the schema, decoded to the canonical image
 * request, run through the metered-call core as the image kind, and rendered in the OpenAI Images
 * shape with the `x-gateway-cost-usd` header. An `Idempotency-Key` replays the result with its cost
 * header (http/idempotency.ts).
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CanonicalImageRequest, CanonicalImageResult, ImageMediaType } from '../../canonical/index.ts';
import { callInput } from '../../http/call-input.ts';
import { COST_HEADER, sendCompleted } from '../../http/completed-answer.ts';
import type { AppDeps } from '../../http/deps.ts';
import { withIdempotency } from '../../http/idempotency.ts';
import { rejectionRecorder } from '../../http/request-recording.ts';
import type { RouteModule } from '../../http/route-module.ts';
import { IMAGE } from '../../pipeline/kinds/image.ts';
import type { ChargeGate } from '../../pipeline/metered-call.ts';
import { pipelineFor, type Pipeline } from '../../pipeline/pipeline.ts';
import type { ServedCall } from '../../pipeline/types.ts';
import { decodeImageEdit, decodeImageGeneration, type DecodedImageRequest } from './decode.ts';
import { encodeImageResult, imageResultPieces, type ImageResultBody } from './encode.ts';
import { MULTIPART_LIMITS, readMultipartEdit } from './multipart.ts';
import { ImageEditRequest, ImageGenerationRequest, type ImageEditBody, type ImageGenerationBody } from './schema.ts';

/** The request log's route names (GET /v1/outputs/{requestId} reports them as endpoints). */
const GENERATIONS = 'images.generations';
const EDITS = 'images.edits';

export const imagesRoutes: RouteModule = (app, deps) => registerImageRoutes(app, deps, pipelineFor(deps));

export async function registerImageRoutes(app: FastifyInstance, deps: AppDeps, pipeline: Pipeline): Promise<void> {
  app.addHook('onClose', () => pipeline.close());
  const answer = async (request: FastifyRequest, reply: FastifyReply, route: string, decoded: DecodedImageRequest) => {
    const input = callInput(request, reply, route, decoded);
    const origin = deps.outputs.originOf(request);
    let delivered: CanonicalImageResult | undefined;
    const render = (result: CanonicalImageResult, call: ServedCall<CanonicalImageRequest>) => {
      delivered = result;
      const urls =
        input.request.responseFormat === 'url'
          ? result.images.map((image, index) => deps.outputs.signedOutputUrl(origin, input.requestId, imageFileName(index, image.mediaType), deps.now()).url)
          : undefined;
      return encodeImageResult(result, call, urls);
    };
    // The images are stored before the charge: a store that fails releases the whole hold.
    const storeImages: ChargeGate<ImageResultBody> = {
      admit: async () => {
        await deps.outputs.storeOutputFiles(
          input.requestId,
          delivered!.images.map((image, index) => ({ name: imageFileName(index, image.mediaType), contentType: image.mediaType, bytes: image.data })),
        );
        return true;
      },
      // The body carries no amount; a charge capped by the balance changes nothing in it.
      amend: async () => {},
    };
    const prepared = await pipeline.prepare(IMAGE, input);
    // The request log keeps each image as the name of its stored file rather than its base64.
    const kept = (body: ImageResultBody) => ({
      output: {
        ...body,
        data: body.data.map(({ b64_json, url, ...rest }, index) => ({ ...rest, file: imageFileName(index, delivered!.images[index].mediaType) })),
      },
    });
    return sendCompleted(reply, await pipeline.meteredCall(prepared, storeImages).complete(render, kept, imageResultPieces));
  };

  app.post<{ Body: ImageGenerationBody }>(
    '/v1/images/generations',
    withIdempotency(
      deps,
      { route: GENERATIONS, resultHeaders: [COST_HEADER], pipeline },
      {
        schema: { summary: 'Generate images', tags: ['images'], body: ImageGenerationRequest },
        onRequest: deps.authenticator.require('images'),
        onError: rejectionRecorder(pipeline, GENERATIONS, deps.now),
      },
    ),
    (request, reply) => answer(request, reply, GENERATIONS, decodeImageGeneration(request.body)),
  );

  // Multipart parsing is scoped to the edits route: every other route still answers 415 to it.
  await app.register(async (scope) => {
    await scope.register(multipart, { limits: MULTIPART_LIMITS, throwFileSizeLimit: true });
    scope.post<{ Body: ImageEditBody }>(
      '/v1/images/edits',
      {
        ...withIdempotency(
          deps,
          { route: EDITS, resultHeaders: [COST_HEADER], pipeline },
          {
            schema: {
              summary: 'Edit an image',
              description: 'Takes application/json (base64 files) or multipart/form-data (binary files); docs/images.md.',
              tags: ['images'],
              consumes: ['application/json', 'multipart/form-data'],
              body: ImageEditRequest,
            },
            onRequest: deps.authenticator.require('images'),
            onError: rejectionRecorder(pipeline, EDITS, deps.now),
          },
        ),
        // Before validation: the multipart form becomes the JSON form's object.
        preValidation: async (request: FastifyRequest) => {
          if (!request.isMultipart()) return;
          try {
            request.body = await readMultipartEdit(request);
          } catch (error) {
            // Refused part-way, the rest of the body is unread: it is read and thrown away, so that the
            // client, still sending, reads the answer, and its connection can carry the next request
            // (which would otherwise wait behind those bytes until the request timeout). The body was
            // bounded before it was read (multipart.ts); the request timeout bounds one that never ends.
            request.raw.unpipe();
            request.raw.resume();
            throw error;
          }
        },
      },
      async (request, reply) => answer(request, reply, EDITS, await decodeImageEdit(request.body)),
    );
  });
}

const EXTENSIONS: Readonly<Record<ImageMediaType, string>> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

/** The stored file of a request's image: `image-0.png`, `image-1.png`, … */
function imageFileName(index: number, mediaType: ImageMediaType): string {
  return `image-${index}.${EXTENSIONS[mediaType]}`;
}
