/**
 * POST /v1/embeddings. The route only translates: the body is validated by the schema, decoded to
 * the canonical embeddings request, run through the metered-call core as the embeddings kind, and
 * rendered in the OpenAI shape with the `x-gateway-cost-usd` header. The vectors are stored as the
 * request's output file (`embeddings.f32`) before the charge; an `Idempotency-Key` replays the
 * answer with its cost header (http/idempotency.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { CanonicalEmbeddingResult } from '../../canonical/index.ts';
import { callInput } from '../../http/call-input.ts';
import { COST_HEADER, sendCompleted } from '../../http/completed-answer.ts';
import type { AppDeps } from '../../http/deps.ts';
import { withIdempotency } from '../../http/idempotency.ts';
import { rejectionRecorder } from '../../http/request-recording.ts';
import type { RouteModule } from '../../http/route-module.ts';
import { EMBEDDING } from '../../pipeline/kinds/embedding.ts';
import type { ChargeGate } from '../../pipeline/metered-call.ts';
import { pipelineFor, type Pipeline } from '../../pipeline/pipeline.ts';
import { decodeEmbeddingsRequest } from './decode.ts';
import { encodeEmbeddings, float32Bytes, type EmbeddingsAnswerBody } from './encode.ts';
import { EmbeddingsRequest, type EmbeddingsBody } from './schema.ts';

/** The request log's route name (GET /v1/outputs/{requestId} reports it as `/v1/embeddings`). */
const ROUTE = 'embeddings';

/**
 * The stored file of a request's vectors: each vector as little-endian float32, one after another in
 * the inputs' order (the bytes of `encoding_format: base64`, unencoded; docs/embeddings.md).
 */
export const VECTORS_FILE = 'embeddings.f32';

export const embeddingsRoutes: RouteModule = (app, deps) => registerEmbeddingsRoutes(app, deps, pipelineFor(deps));

export async function registerEmbeddingsRoutes(app: FastifyInstance, deps: AppDeps, pipeline: Pipeline): Promise<void> {
  app.addHook('onClose', () => pipeline.close());
  app.post<{ Body: EmbeddingsBody }>(
    '/v1/embeddings',
    withIdempotency(
      deps,
      { route: ROUTE, resultHeaders: [COST_HEADER], pipeline },
      {
        schema: { summary: 'Create embeddings', tags: ['embeddings'], body: EmbeddingsRequest },
        onRequest: deps.authenticator.require('embeddings'),
        onError: rejectionRecorder(pipeline, ROUTE, deps.now),
      },
    ),
    async (request, reply) => {
      const decoded = decodeEmbeddingsRequest(request.body);
      const input = callInput(request, reply, ROUTE, decoded);
      // Each vector as float32, made once: the stored file and a `base64` answer are these bytes.
      let float32: Buffer[] | undefined;
      const float32Of = (result: CanonicalEmbeddingResult) => (float32 ??= result.vectors.map(float32Bytes));
      // The vectors are stored before the charge: a store that fails releases the whole hold.
      const storeVectors: ChargeGate<EmbeddingsAnswerBody> = {
        admit: async () => {
          const bytes = Buffer.concat(float32!);
          await deps.outputs.storeOutputFiles(input.requestId, [{ name: VECTORS_FILE, contentType: 'application/octet-stream', bytes }]);
          return true;
        },
        amend: async () => {},
      };
      const prepared = await pipeline.prepare(EMBEDDING, input);
      const completed = await pipeline.meteredCall(prepared, storeVectors).complete(
        (result, call, settlement) => encodeEmbeddings(result, call.modelId, settlement, decoded.encoding, float32Of(result)),
        // The request log keeps the answer without its vectors, which are in the stored file.
        (body) => ({
          output: {
            ...body,
            data: body.data.map(({ embedding, ...rest }, index) => ({ ...rest, file: VECTORS_FILE, dimensions: float32![index].length / 4 })),
          },
        }),
      );
      return sendCompleted(reply, completed);
    },
  );
}
