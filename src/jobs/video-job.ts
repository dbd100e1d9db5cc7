/**
 * Video jobs (docs/video.md): submitted like any metered job (validated, quoted and held in the
 * request, the hold in the job's name; ./metered-job.ts), then driven by a worker as the
 * start-and-poll driver of a metered call (pipeline/operation.ts, pipeline/metered-call.ts):
 * 1. `start` the upstream operation (falling back to the next route while nothing was accepted),
 *    after recording the dispatch, and record the operation as the job's checkpoint at once: a
 *    worker taking the job over after a crash polls that operation instead of starting a second,
 *    paid, generation (a crash between the upstream's acceptance and the checkpoint fails the job
 *    without a charge, as for any job sent upstream);
 * 2. look at it, one look per step of the job (runner.ts): between looks the job is parked, holding
 *    no worker, with doubling waits, or longer when the provider asks for it (Retry-After); a
 *    transient failure is looked at again later, an operation not done within the timeout is given
 *    up;
 * 3. on success, copy the file into the blob store (dated from the job, so that it is swept when
 *    the job expires); then the metered call ends it in its one order: the job's end with its
 *    object and cost (compare-and-set), the charge of the seconds delivered, the amended object,
 *    the request log row. An upstream failure or cancellation ends the job, releases the whole
 *    hold and records the row, in that order.
 * An instance stopping, or a worker losing its lease, leaves the job as it is: the next worker
 * resumes it from the checkpoint (each step goes on from it in any case).
 */
import type { OperationState, VideoOperation } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import { errors, type GatewayError, isStoreUnavailable } from '../core/errors.ts';
import type { Outputs } from '../outputs/outputs.ts';
import { completeWithFallback } from '../pipeline/attempts.ts';
import { crashPoint } from '../core/crash-point.ts';
import { VIDEO_OUTPUT, type VideoMeter, type VideoTypes } from '../pipeline/kinds/video.ts';
import type { MeteredCall } from '../pipeline/metered-call.ts';
import type { OperationDriver, OperationLook, StartedOperation } from '../pipeline/operation.ts';
import type { Pipeline, PreparedCall } from '../pipeline/pipeline.ts';
import type { Settlement } from '../pipeline/types.ts';
import { videoDuration } from '../policy/videos.ts';
import type { ParamNamer } from '../policy/violation.ts';
import type { VideoCall } from '../protocols/video-protocol.ts';
import { asGatewayError } from '../routing/fallback.ts';
import type { JobRecord } from '../storage/store.ts';
import type { JobContext, JobHandler } from './handler.ts';
import { jobGate } from './job-gate.ts';
import { recordMeteredJobEnd, resumeJobCall, type MeteredJobKind } from './metered-job.ts';
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

/** What the job records once the upstream accepted the work: the route that did, and its operation. */
interface VideoCheckpoint extends StartedOperation {
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
  const prepared = await resumeJobCall(pipeline, VIDEO_OUTPUT, job, context, presenter.names, presenter.failed);
  if (prepared === undefined) return;
  const call = pipeline.meteredCall(prepared, jobGate(job, context, { ...presenter, ended: () => 'completed' }));
  const driver = videoOperation(deps, job);
  let endpoint: RouteEndpoint | undefined;
  try {
    let checkpoint = job.checkpoint as VideoCheckpoint | null;
    if (checkpoint === null) {
      // Moved on before anything was sent: its hold is someone else's now.
      if (!(await context.dispatch())) return;
      checkpoint = await driver.start(call);
      if (!(await context.checkpoint(checkpoint))) return;
    }
    endpoint = pipeline.catalog.route(prepared.modelId, checkpoint.routeKey);
    if (!endpoint) throw errors.plannedRoutesGone(prepared.modelId);
    const ended = await lookAtOperation(deps, driver, call, job, endpoint, checkpoint, context);
    if (ended.status === 'running') {
      await context.park(deps.now() + ended.waitMs, { ...checkpoint, waitMs: ended.waitMs });
      return;
    }
    if (ended.status === 'failed') throw ended.error;
    if (ended.status === 'cancelled') throw errors.operationCancelledUpstream();
    crashPoint('attempted');
    const served = endpoint;
    const files = ended.delivered;
    const metered = call.meter(served, driver.meter(call, served, files));
    const delivered = files.map((file) => ({ ...file, seconds: metered.meter.seconds }));
    const charged = await call.charge(metered, (settlement) => presenter.completed(job, delivered, settlement));
    // Moved on (taken over) meanwhile: the job, and its hold, are another worker's now.
    if (charged === undefined) return;
    await call.record({
      status: 'completed',
      httpStatus: 200,
      ...call.settled(served, charged.settlement),
      output: charged.body,
      blobKeys: files.map((file) => file.key),
    });
  } catch (error) {
    // Stopping, or the lease lost: the job stays as it is, and whoever runs it next resumes it.
    // So too when the store could not be reached (a checkpoint, a park, a settlement): failing the
    // job would release its hold while the upstream goes on with the work; its lease lapses instead,
    // and the next run resumes it from its last checkpoint (an ended job's hold is finished by the
    // runner's reconciliation).
    if (context.signal.aborted || isStoreUnavailable(error)) return;
    await call.fail(error, endpoint);
  }
}

/** The video capability's operation as the start-and-poll driver of a metered call. */
function videoOperation(deps: VideoJobDeps, job: JobRecord): OperationDriver<VideoTypes, VideoCheckpoint, readonly DeliveredVideoFile[]> {
  return {
    async start(call) {
      const { prepared } = call;
      const started = await completeWithFallback(call.attemptContext(), (route, callContext) =>
        call.protocolFor(route).start(videoCall(prepared, route), route, callContext),
      );
      return { routeKey: started.endpoint.key, operation: started.result };
    },
    async look(call, endpoint, checkpoint, signal) {
      const attempt = call.attemptContext(signal, [endpoint]);
      const { result: state } = await completeWithFallback(attempt, (route, callContext) =>
        call.protocolFor(endpoint).poll(checkpoint.operation, route, callContext),
      );
      return lookOf(deps, call.prepared, job, endpoint, state);
    },
    meter: (call, endpoint, files) => VIDEO_OUTPUT.meter(call.prepared.request, { seconds: files[0].seconds }, endpoint),
  };
}

function videoCall(prepared: PreparedCall<VideoTypes>, endpoint: RouteEndpoint): VideoCall {
  const { request } = prepared;
  const variantMeta = request.pricingVariant === undefined ? undefined : endpoint.video.variantMeta.get(request.pricingVariant);
  return { request, durationSeconds: videoDuration(request, endpoint), ...(variantMeta ? { variantMeta } : {}) };
}

/** What one look found: the operation's end, or how long to wait before the next look. */
type Look = Exclude<OperationLook<readonly DeliveredVideoFile[]>, { readonly status: 'running' }> | { readonly status: 'running'; readonly waitMs: number };

/**
 * Looks at the operation once. A transient failure of the look or of the download is looked at
 * again later; an operation whose next look would come after its deadline is given up.
 */
async function lookAtOperation(
  deps: VideoJobDeps,
  driver: OperationDriver<VideoTypes, VideoCheckpoint, readonly DeliveredVideoFile[]>,
  call: MeteredCall<VideoTypes>,
  job: JobRecord,
  endpoint: RouteEndpoint,
  checkpoint: VideoCheckpoint,
  context: JobContext,
): Promise<Look> {
  const { settings, now } = deps;
  let askedMs: number | undefined;
  try {
    const look = await driver.look(call, endpoint, checkpoint, context.signal);
    if (look.status !== 'running') return look;
    askedMs = look.retryAfterMs;
  } catch (error) {
    const failure = asGatewayError(error);
    if (!failure.retryable || context.signal.aborted) throw failure;
    askedMs = failure.retryAfterSeconds === undefined ? undefined : failure.retryAfterSeconds * 1000;
    // The cause says what failed (a malformed answer carries its body, cut short: protocols/wire-schema.ts).
    call.logger.warn(
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

/** One look's answer; a finished video is copied into the job's outputs first. */
async function lookOf(
  deps: VideoJobDeps,
  prepared: PreparedCall<VideoTypes>,
  job: JobRecord,
  endpoint: RouteEndpoint,
  state: OperationState,
): Promise<OperationLook<readonly DeliveredVideoFile[]>> {
  switch (state.status) {
    case 'running':
      return { status: 'running', ...(state.retryAfterMs === undefined ? {} : { retryAfterMs: state.retryAfterMs }) };
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
      return { status: 'succeeded', delivered: [{ name, contentType: video.contentType, seconds, size: stored.size, key: stored.key }] };
    }
  }
}

const EXTENSIONS: Readonly<Record<string, string>> = { 'video/mp4': 'mp4', 'video/webm': 'webm', 'video/quicktime': 'mov' };

/** The stored file of a job's video: `video-0.mp4`, … */
export function videoFileName(index: number, contentType: string): string {
  return `video-${index}.${EXTENSIONS[contentType.split(';')[0].trim().toLowerCase()] ?? 'bin'}`;
}
