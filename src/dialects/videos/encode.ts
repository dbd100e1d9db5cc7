/**
 * The VideoJob object (docs/video.md) at each step of its job, and as a client polls it. The job
 * stores the object without URLs: a poll signs each file afresh (valid 10 minutes), and a webhook
 * event carries the stored object, whose URLs a client gets by polling.
 */
import type { GatewayError } from '../../core/errors.ts';
import type { DeliveredVideoFile, VideoJobPresenter } from '../../jobs/video-job.ts';
import type { JobRecord } from '../../jobs/jobs.ts';
import { VIDEO_OUTPUT } from '../../pipeline/kinds/video.ts';
import { videoDuration } from '../../policy/videos.ts';
import type { SignedOutputUrl } from '../../outputs/outputs.ts';
import { videoFileName } from '../../jobs/video-job.ts';
import { mediaParamNames } from '../media-param-names.ts';

export type VideoJobStatus = 'processing' | 'completed' | 'failed' | 'cancelled';

export interface VideoFileObject {
  url?: string;
  expires_at?: number;
  content_type: string;
  duration_seconds: number;
  size: number;
}

export interface VideoJobObject {
  id: string;
  object: 'video.generation.job';
  created: number;
  model: string;
  status: VideoJobStatus;
  durationSeconds: number;
  data: VideoFileObject[];
  error: { code: string | null; message: string } | null;
}

export const VIDEO_JOBS: VideoJobPresenter = {
  jobKind: 'video',
  output: VIDEO_OUTPUT,
  names: mediaParamNames,
  queued: (prepared, jobId) => ({
    id: jobId,
    object: 'video.generation.job',
    created: Math.floor(prepared.createdAt / 1000),
    model: prepared.modelId,
    status: 'processing',
    // The seconds the first route of the plan is asked for (the one that normally serves it).
    durationSeconds: videoDuration(prepared.request, prepared.attempts[0]),
    data: [],
    error: null,
  }),
  completed: (job, files, settlement) => ({
    ...stored(job),
    status: 'completed',
    durationSeconds: settlement.seconds,
    data: files.map(fileObject),
    error: null,
  }),
  failed: (job, error) => ({ ...stored(job), status: 'failed', data: [], error: errorObject(error) }),
  cancelled: (job) => ({ ...stored(job), status: 'cancelled', data: [], error: null }),
};

function stored(job: JobRecord): VideoJobObject {
  return job.result as VideoJobObject;
}

function fileObject(file: DeliveredVideoFile): VideoFileObject {
  return { content_type: file.contentType, duration_seconds: file.seconds, size: file.size };
}

function errorObject(error: GatewayError): VideoJobObject['error'] {
  return { code: error.code, message: error.message };
}

/** The object a client polls: each file with a fresh signed URL. `sign` names a file of the job. */
export function polledVideoJob(job: JobRecord, sign: (name: string) => SignedOutputUrl): VideoJobObject {
  const object = stored(job);
  if (object.data.length === 0) return object;
  return {
    ...object,
    data: object.data.map((file, index) => {
      const signed = sign(videoFileName(index, file.content_type));
      return { url: signed.url, expires_at: signed.expiresAt, ...file };
    }),
  };
}
