/**
 * Queue answers → operations and their states. A status of COMPLETED with an `error` is a failed
 * run; CANCELLED (either spelling) was cancelled upstream; the result of a completed run links to
 * the file and may say how many seconds it holds.
 */
import type { VideoOperation } from '../../canonical/index.ts';
import { errors } from '../../core/errors.ts';
import { finished, linkedVideo, type ParsedOperation } from '../video-output.ts';
import { detailMessage } from './errors.ts';
import { checkedBody, wireCheck } from '../wire-schema.ts';
import { QueueStatusSchema, QueueSubmissionSchema, QueueVideoResultSchema } from './video-wire.ts';

const checkSubmission = wireCheck(QueueSubmissionSchema, 'a queue submission');
const checkStatus = wireCheck(QueueStatusSchema, 'a queue status');
const checkResult = wireCheck(QueueVideoResultSchema, 'a queue result');

/** The URLs a queued request is looked at by, kept with its id. */
export interface QueueOperation extends VideoOperation {
  readonly status_url: string;
  readonly response_url: string;
}

export function parseQueueSubmission(body: unknown): QueueOperation {
  const wire = checkedBody(checkSubmission, body);
  if (wire.request_id == null || wire.request_id === '') throw errors.malformedUpstream('a queue submission without a request_id');
  if (!isHttpUrl(wire.status_url) || !isHttpUrl(wire.response_url)) throw errors.malformedUpstream('a queue submission without status and response URLs');
  return { id: wire.request_id, status_url: wire.status_url, response_url: wire.response_url };
}

/** A look at the status; `completed` means the result is ready to be read. */
export type QueueState = Exclude<ParsedOperation, { readonly status: 'succeeded' }> | { readonly status: 'completed' };

export function parseQueueStatus(body: unknown): QueueState {
  const wire = checkedBody(checkStatus, body);
  if (wire.error !== undefined && wire.error !== null) {
    const message = detailMessage(wire.error) ?? wire.error_type ?? 'the generation failed';
    return { status: 'failed', error: errors.upstreamReported(message, false) };
  }
  switch (wire.status) {
    case 'IN_QUEUE':
    case 'IN_PROGRESS':
      return { status: 'running' };
    case 'COMPLETED':
      return { status: 'completed' };
    case 'CANCELLED':
    case 'CANCELED':
      return { status: 'cancelled' };
    default:
      throw errors.malformedUpstream(`a queue status that is not known (${String(wire.status)})`);
  }
}

export function parseQueueResult(body: unknown): ParsedOperation {
  const wire = checkedBody(checkResult, body);
  if (wire.detail !== undefined) return { status: 'failed', error: errors.upstreamReported(detailMessage(wire.detail), false) };
  const video = wire.video;
  if (video?.url == null) return { status: 'failed', error: errors.malformedUpstream('a result without a video') };
  return finished(() => linkedVideo(video.url, video.content_type ?? undefined, wire.duration ?? undefined));
}

function isHttpUrl(value: unknown): value is string {
  return typeof value === 'string' && /^https?:\/\//.test(value);
}
