/**
 * Queue answers → operations and their states. A status of COMPLETED with an `error` is a failed
 * run; CANCELLED (either spelling) was cancelled upstream; the result of a completed run links to
 * the file and may say how many seconds it holds.
 */
import type { VideoOperation } from '../../canonical/index.ts';
import { errors } from '../../core/errors.ts';
import { finished, linkedVideo, type ParsedOperation } from '../video-output.ts';
import { detailMessage } from './errors.ts';
import type { QueueStatusWire, QueueSubmissionWire, QueueVideoResultWire } from './video-wire.ts';

/** The URLs a queued request is looked at by, kept with its id. */
export interface QueueOperation extends VideoOperation {
  readonly status_url: string;
  readonly response_url: string;
}

export function parseQueueSubmission(body: unknown): QueueOperation {
  const wire = objectWire<QueueSubmissionWire>(body, 'a queue submission');
  if (typeof wire.request_id !== 'string' || wire.request_id === '') throw errors.malformedUpstream('a queue submission without a request_id');
  if (!isHttpUrl(wire.status_url) || !isHttpUrl(wire.response_url)) throw errors.malformedUpstream('a queue submission without status and response URLs');
  return { id: wire.request_id, status_url: wire.status_url, response_url: wire.response_url };
}

/** A look at the status; `completed` means the result is ready to be read. */
export type QueueState = Exclude<ParsedOperation, { readonly status: 'succeeded' }> | { readonly status: 'completed' };

export function parseQueueStatus(body: unknown): QueueState {
  const wire = objectWire<QueueStatusWire>(body, 'a queue status');
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
  const wire = objectWire<QueueVideoResultWire>(body, 'a queue result');
  if (wire.detail !== undefined) return { status: 'failed', error: errors.upstreamReported(detailMessage(wire.detail), false) };
  const video = wire.video;
  if (video?.url === undefined) return { status: 'failed', error: errors.malformedUpstream('a result without a video') };
  const seconds = typeof wire.duration === 'number' && Number.isFinite(wire.duration) && wire.duration > 0 ? wire.duration : undefined;
  return finished(() => linkedVideo(video.url, video.content_type, seconds));
}

function objectWire<Wire>(body: unknown, what: string): Wire {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw errors.malformedUpstream(`${what} that is not a JSON object`);
  return body as Wire;
}

function isHttpUrl(value: unknown): value is string {
  return typeof value === 'string' && /^https?:\/\//.test(value);
}
