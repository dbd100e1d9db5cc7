/**
 * POST /v1/videos/generations and GET /v1/videos/generations/{id} (docs/video.md).
 *
 * - POST validates, quotes and holds credit for the seconds asked for in the request (every
 *   refusal happens here, before anything is queued), stores the job durably with its hold, and
 *   answers the VideoJob at once, `processing`. A worker of any instance runs it (src/jobs/video-job.ts).
 *   There is no Idempotency-Key on this route (the API has none for video): the header is ignored.
 * - GET returns the caller's job with its files signed afresh, and `Retry-After: 5` while it
 *   is processing; another owner's, an unknown or an expired (24 h) job is the same 404.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../core/errors.ts';
import { timeOrderedId } from '../../core/ids.ts';
import { callInput } from '../../http/call-input.ts';
import type { AppDeps } from '../../http/deps.ts';
import { holdSlotForJob } from '../../http/limits.ts';
import { rejectionRecorder } from '../../http/request-recording.ts';
import type { RouteModule } from '../../http/route-module.ts';
import { submitMetered } from '../../jobs/metered-job.ts';
import { videoJobHandler } from '../../jobs/video-job.ts';
import { videoJobSettings } from '../../jobs/video-settings.ts';
import { pipelineFor, type Pipeline } from '../../pipeline/pipeline.ts';
import { decodeVideoGeneration } from './decode.ts';
import { polledVideoJob, VIDEO_JOBS } from './encode.ts';
import { VideoGenerationRequest, VideoJobSchema, type VideoGenerationBody } from './schema.ts';

/** The request log's route name. */
const ROUTE = 'videos.generations';
/** The poll interval the API tells clients while a job is processing. */
const RETRY_AFTER_SECONDS = '5';

export const videosRoutes: RouteModule = (app, deps) => registerVideoRoutes(app, deps, pipelineFor(deps));

export function registerVideoRoutes(app: FastifyInstance, deps: AppDeps, pipeline: Pipeline): void {
  app.addHook('onClose', () => pipeline.close());
  deps.jobs.runner.register(videoJobHandler({ pipeline, outputs: deps.outputs, settings: videoJobSettings(deps.config), now: deps.now }, VIDEO_JOBS));
  const authenticate = deps.authenticator.require('videos');
  const response = { 200: VideoJobSchema };

  app.post<{ Body: VideoGenerationBody }>(
    '/v1/videos/generations',
    {
      schema: { summary: 'Submit a video generation job', tags: ['videos'], body: VideoGenerationRequest, response },
      onRequest: authenticate,
      onError: rejectionRecorder(pipeline, ROUTE, deps.now),
    },
    async (request, reply) => {
      const input = callInput(request, reply, ROUTE, decodeVideoGeneration(request.body));
      const job = await submitMetered(pipeline, deps.jobs, VIDEO_JOBS, { ...input, jobId: timeOrderedId('vid'), context: null });
      await holdSlotForJob(request, job.id, Math.max(1, job.expiresAt - deps.now()));
      return reply.header('retry-after', RETRY_AFTER_SECONDS).send(job.result);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/videos/generations/:id',
    {
      schema: { summary: 'Retrieve a video generation job', tags: ['videos'], params: Type.Object({ id: Type.String() }), response },
      onRequest: authenticate,
    },
    async (request, reply) => {
      const id = request.params.id;
      const job = await deps.jobs.find(VIDEO_JOBS.jobKind, id, request.auth.owner);
      if (job === null) throw errors.notFound('Video job', id);
      const origin = deps.outputs.originOf(request);
      const polled = polledVideoJob(job, (name) => deps.outputs.signedOutputUrl(origin, job.id, name, deps.now()));
      if (polled.status === 'processing') reply.header('retry-after', RETRY_AFTER_SECONDS);
      return polled;
    },
  );
}
