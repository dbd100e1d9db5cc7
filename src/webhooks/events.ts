/**
 * The events a job's end produces, and the body every endpoint receives for one. The event id is
 * derived from the job and the type, so that every instance announcing the same end names the same
 * event, and the `webhook-id` header is the same on every retry.
 */
import { createHash } from 'node:crypto';
import type { BuiltInJobKind, EndedJobStatus, JobRecord, JobStatus, WebhookEvent } from '../storage/store.ts';

/** The one mapping of a job's kind and end to its event type; a kind or an end missing here produces none. */
const EVENT_TYPES = {
  response: {
    completed: 'response.completed',
    incomplete: 'response.incomplete',
    failed: 'response.failed',
    cancelled: 'response.cancelled',
  },
  video: {
    completed: 'video.completed',
    failed: 'video.failed',
    cancelled: 'video.cancelled',
  },
} as const satisfies { readonly [Kind in BuiltInJobKind]: Partial<Record<EndedJobStatus, string>> };

type EventTypeOf<Kind extends BuiltInJobKind> = (typeof EVENT_TYPES)[Kind][keyof (typeof EVENT_TYPES)[Kind]];
export type WebhookEventType = EventTypeOf<'response'> | EventTypeOf<'video'>;

/** Every event type, in the order of the mapping. */
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = Object.values(EVENT_TYPES).flatMap((byStatus) => Object.values(byStatus) as WebhookEventType[]);

export function isWebhookEventType(value: string): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}

/** The event type of a job's current status; null while it runs, or for an end no type describes. */
export function eventTypeOf(job: Pick<JobRecord, 'kind' | 'status'>): WebhookEventType | null {
  if (!Object.hasOwn(EVENT_TYPES, job.kind)) return null;
  const byStatus: Partial<Record<JobStatus, WebhookEventType>> = EVENT_TYPES[job.kind as BuiltInJobKind];
  return byStatus[job.status] ?? null;
}

/** `evt_` and 32 hex digits of a hash of the job id and the type. */
export function eventId(jobId: string, type: WebhookEventType): string {
  return `evt_${createHash('sha256').update(`${jobId}\n${type}`).digest('hex').slice(0, 32)}`;
}

/**
 * The event of an ended job: its body carries the job's client-visible object as `data`, and the
 * job's last change (its end) as `created_at`, in epoch seconds like every `created_at` of the API.
 */
export function jobEvent(job: JobRecord): WebhookEvent | null {
  const type = eventTypeOf(job);
  if (type === null) return null;
  const id = eventId(job.id, type);
  const body = JSON.stringify({ id, object: 'event', type, created_at: Math.floor(job.updatedAt / 1000), data: job.result });
  return { id, type, body, createdAt: job.updatedAt };
}
