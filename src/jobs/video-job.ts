/**
 * Video jobs (docs/video.md): submitted like any metered job (validated, quoted and held in the
 * request, the hold in the job's name; ./metered-job.ts), then driven by a worker through the
 * route's video protocol:
 * 1. `start` the upstream operation (falling back to the next route while nothing was accepted),
 *    after recording the dispatch, and record the operation as the job's checkpoint at once: a
 *    worker taking the job over after a crash polls that operation instead of starting a second,
 *    paid, generation (a crash between the upstream's acceptance and the checkpoint fails the job
 *    without a charge, as for any job sent upstream);
 * 2. `poll` it, one look per step of the job (runner.ts): between looks the job is parked, holding
 *    no worker, with doubling waits, or longer when the provider asks for it (Retry-After); a
 *    transient failure is looked at again later, an operation not done within the timeout is given
 *    up;
 * 3. on success, copy the file into the blob store (dated from the job, so that it is swept when
 *    the job expires), end the job with its object and cost, then charge the seconds delivered; an
 *    upstream failure or cancellation releases the whole hold.
 * An instance stopping, or a worker losing its lease, leaves the job as it is: the next worker
 * resumes it from the checkpoint (each step goes on from it in any case). A job is always ended before its hold is finished, so that a
 * worker that lost the job meanwhile never finishes a hold that is no longer its own (a hold left
 * open by a crash after the end is finished by the runner's reconciliation).
 */
import type { OperationState, VideoOperation } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import { errors, type GatewayError } from '../core/errors.ts';
import type { Outputs } from '../outputs/outputs.ts';
import { completeWithFallback } from '../pipeline/attempts.ts';
import { VIDEO_OUTPUT, type VideoMeter, type VideoTypes } from '../pipeline/kinds/video.ts';
import type { Pipeline, PreparedCall } from '../pipeline/pipeline.ts';
import { resumePrepared } from '../pipeline/prepared-record.ts';
import type { Settlement } from '../pipeline/types.ts';
import { videoDuration } from '../policy/videos.ts';
import type { ParamNamer } from '../policy/violation.ts';
import type { VideoCall } from '../protocols/video-protocol.ts';
import { asGatewayError } from '../routing/fallback.ts';
import type { JobRecord } from '../storage/store.ts';
import type { JobContext, JobHandler } from './handler.ts';
import { recordMeteredJobEnd, type MeteredJobKind, type MeteredPayload } from './metered-job.ts';
import type { VideoJobSettings } from './video-settings.ts';

/** A delivered file of a video job, as its object describes it. */
export interface DeliveredVideoFile {
  /** The file's name in the job's outputs (`video-0.mp4`). */
  readonly name: string;
  readonly contentType: string;
  readonly seconds: number;
  readonly size: number;
  /** Its blob key. */
  readonly key: string;
}

/** The dialect's objects of a video job at each step. */
export interface VideoJobPresenter extends MeteredJobKind<VideoTypes> {
  readonly names: ParamNamer;
  completed(job: JobRecord, files: readonly DeliveredVideoFile[], settlement: Settlement<VideoMeter>): unknown;
  failed(job: JobRecord, error: GatewayError): unknown;
  cancelled(job: JobRecord): unknown;
}

/** What the job records once the upstream accepted the work. */
interface VideoCheckpoint {
  /** The route (`<provider>:<upstream model>`) whose protocol started the operation. */
  readonly routeKey: string;
  readonly operation: VideoOperation;
  /** The job's last wait between two looks (the next doubles it); absent before the first. */
  readonly waitMs?: number;
}

export interface VideoJobDeps {
  readonly pipeline: Pipeline;
  readonly outputs: Outputs;
  readonly settings: VideoJobSettings;
  readonly now: () => number;
}

export function videoJobHandler(deps: VideoJobDeps, presenter: VideoJobPresenter): JobHandler {
  return {
    kind: presenter.jobKind,
    failed: presenter.failed,
    cancelled: presenter.cancelled,
    recordEnd: (job, status, error) => recordMeteredJobEnd(deps.pipeline, job, status, error),
    run: (job, context) => runVideoStep(deps, presenter, job, context),
    // Started, then looked at now and then: a step at a time, parked in between.
    schedule: 'operation',
  };
}

/** One step of a video job: start its operation (and look at it at once), or look at it again. */
async function runVideoStep(deps: VideoJobDeps, presenter: VideoJobPresenter, job: JobRecord, context: JobContext): Promise<void> {
  const { pipeline } = deps;
  const payload = job.payload as MeteredPayload<VideoTypes['request']>;
  let prepared: PreparedCall<VideoTypes>;
  try {
    prepared = await resumePrepared(pipeline, VIDEO_OUTPUT, payload.call, { names: presenter.names, signal: context.signal });
  } catch (error) {
    // Its hold is gone or its routes left the config: it ends without having run.
    const failure = asGatewayError(error);
    if (await context.end('failed', presenter.failed(job, failure))) recordMeteredJobEnd(pipeline, job, 'failed', failure);
    return;
  }
  let endpoint: RouteEndpoint | undefined;
  try {
    let checkpoint = job.checkpoint as VideoCheckpoint | null;
    if (checkpoint === null) {
      // Moved on before anything was sent: its hold is someone else's now.
      if (!(await context.dispatch())) return;
      checkpoint = await startOperation(pipeline, prepared);
      if (!(await context.checkpoint(checkpoint))) return;
    }
    endpoint = pipeline.catalog.route(prepared.modelId, checkpoint.routeKey);
    if (!endpoint) throw errors.plannedRoutesGone(prepared.modelId);
    const ended = await lookAtOperation(deps, prepared, job, endpoint, checkpoint, context);
    if (ended.status === 'running') {
      await context.park(deps.now() + ended.waitMs, { ...checkpoint, waitMs: ended.waitMs });
      return;
    }
    if (ended.status === 'failed') throw ended.error;
    if (ended.status === 'cancelled') {
      if (!(await context.end('cancelled', presenter.cancelled(job)))) return;
      await prepared.hold.release();
      pipeline.record(prepared, { status: 'cancelled', httpStatus: 409, endpoint, errorCode: 'cancelled_upstream' });
      return;
    }
    await deliver(deps, presenter, prepared, job, endpoint, ended.files, context);
  } catch (error) {
    // Stopping, or the lease lost: the job stays as it is, and whoever runs it next resumes it.
    if (context.signal.aborted) return;
    // Ended first, then released: a job that moved on meanwhile is no longer this worker's to release.
    const failure = pipeline.failure(prepared, error);
    if (await context.end('failed', presenter.failed(job, failure))) await pipeline.fail(prepared, failure, endpoint);
  }
}

/** Starts the operation on the first route that accepts it. */
async function startOperation(pipeline: Pipeline, prepared: PreparedCall<VideoTypes>): Promise<VideoCheckpoint> {
  const started = await completeWithFallback(pipeline.attemptContext(prepared, prepared.signal), (route, callContext) =>
    pipeline.protocolFor(prepared, route).start(videoCall(prepared, route), route, callContext),
  );
  return { routeKey: started.endpoint.key, operation: started.result };
}

function videoCall(prepared: PreparedCall<VideoTypes>, endpoint: RouteEndpoint): VideoCall {
  const { request } = prepared;
  const variantMeta = request.pricingVariant === undefined ? undefined : endpoint.video.variantMeta.get(request.pricingVariant);
  return { request, durationSeconds: videoDuration(request, endpoint), ...(variantMeta ? { variantMeta } : {}) };
}

type OperationEnd =
  | { readonly status: 'succeeded'; readonly files: readonly DeliveredVideoFile[] }
  | { readonly status: 'cancelled' }
  /** The upstream reported the generation failed: final, whatever its error would mean for a call. */
  | { readonly status: 'failed'; readonly error: GatewayError };

/** What one look found: the operation's end, or how long to wait before the next look. */
type Look = OperationEnd | { readonly status: 'running'; readonly waitMs: number };

/**
 * Looks at the operation once, and copies a finished video into the job's outputs. A transient
 * failure of the look or of the download is looked at again later; an operation whose next look
 * would come after its deadline is given up.
 */
async function lookAtOperation(
  deps: VideoJobDeps,
  prepared: PreparedCall<VideoTypes>,
  job: JobRecord,
  endpoint: RouteEndpoint,
  checkpoint: VideoCheckpoint,
  context: JobContext,
): Promise<Look> {
  const { pipeline, settings, now } = deps;
  const protocol = pipeline.protocolFor(prepared, endpoint);
  const attempt = pipeline.attemptContext({ ...prepared, attempts: [endpoint] }, context.signal);
  let askedMs: number | undefined;
  try {
    const { result: state } = await completeWithFallback(attempt, (route, callContext) => protocol.poll(checkpoint.operation, route, callContext));
    const ended = await settledState(deps, prepared, job, endpoint, state);
    if (ended) return ended;
    if (state.status === 'running') askedMs = state.retryAfterMs;
  } catch (error) {
    const failure = asGatewayError(error);
    if (!failure.retryable || context.signal.aborted) throw failure;
    askedMs = failure.retryAfterSeconds === undefined ? undefined : failure.retryAfterSeconds * 1000;
    // The cause says what failed (a malformed answer carries its body, cut short: protocols/wire-schema.ts).
    pipeline.logger.warn(
      { jobId: job.id, provider: endpoint.provider.id, status: failure.status, code: failure.code, err: failure.cause },
      'looking at a video operation failed; looking again later',
    );
  }
  const waitMs = nextWait(settings, checkpoint.waitMs, askedMs);
  if (now() + waitMs > job.createdAt + settings.timeoutMs) {
    throw errors.upstreamTimedOut(`the video operation did not finish within ${Math.round(settings.timeoutMs / 1000)} s`, false);
  }
  return { status: 'running', waitMs };
}

/**
 * The wait before the next look: the first poll interval, then each wait doubled up to the
 * maximum; never shorter than the provider asked for (it may ask for longer than the maximum).
 */
export function nextWait(settings: VideoJobSettings, lastMs: number | undefined, askedMs: number | undefined): number {
  const backoff = lastMs === undefined ? settings.pollIntervalMs : Math.min(lastMs * 2, settings.maxPollIntervalMs);
  return Math.max(backoff, askedMs ?? 0);
}

async function settledState(
  deps: VideoJobDeps,
  prepared: PreparedCall<VideoTypes>,
  job: JobRecord,
  endpoint: RouteEndpoint,
  state: OperationState,
): Promise<OperationEnd | undefined> {
  switch (state.status) {
    case 'running':
      return undefined;
    case 'failed':
      return { status: 'failed', error: state.error };
    case 'cancelled':
      return { status: 'cancelled' };
    case 'succeeded': {
      const { video } = state;
      const name = videoFileName(0, video.contentType);
      const [stored] = await deps.outputs.storeOutputFiles(job.id, [
        { name, contentType: video.contentType, bytes: await video.fetch(), datedAt: job.createdAt },
      ]);
      const seconds = video.durationSeconds ?? videoDuration(prepared.request, endpoint);
      return { status: 'succeeded', files: [{ name, contentType: video.contentType, seconds, size: stored.size, key: stored.key }] };
    }
  }
}

/** Ends the job with its object and cost, then charges the seconds delivered. */
async function deliver(
  deps: VideoJobDeps,
  presenter: VideoJobPresenter,
  prepared: PreparedCall<VideoTypes>,
  job: JobRecord,
  endpoint: RouteEndpoint,
  files: readonly DeliveredVideoFile[],
  context: JobContext,
): Promise<void> {
  const { pipeline } = deps;
  const meter = VIDEO_OUTPUT.meter(prepared.request, { seconds: files[0].seconds }, endpoint);
  const cost = pipeline.price(prepared, endpoint, meter);
  const delivered = files.map((file) => ({ ...file, seconds: meter.seconds }));
  const expected = pipeline.expected(prepared, meter, cost);
  const body = presenter.completed(job, delivered, expected);
  // Moved on (taken over) meanwhile: the job, and its hold, are another worker's now.
  if (!(await context.end('completed', body, expected.charged))) return;
  const settlement = await pipeline.settle(prepared, meter, cost);
  const answer = settlement.charged === expected.charged ? body : presenter.completed(job, delivered, settlement);
  if (answer !== body) await context.amend(answer);
  const blobKeys = files.map((file) => file.key);
  pipeline.record(prepared, { status: 'completed', httpStatus: 200, endpoint, ...pipeline.settled(prepared, settlement), output: answer, blobKeys });
}

const EXTENSIONS: Readonly<Record<string, string>> = { 'video/mp4': 'mp4', 'video/webm': 'webm', 'video/quicktime': 'mov' };

/** The stored file of a job's video: `video-0.mp4`, … */
export function videoFileName(index: number, contentType: string): string {
  return `video-${index}.${EXTENSIONS[contentType.split(';')[0].trim().toLowerCase()] ?? 'bin'}`;
}
