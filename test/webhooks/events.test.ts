/** The event types of job ends and the event body (src/webhooks/events.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JobRecord } from '../../src/storage/store.ts';
import { eventId, eventTypeOf, jobEvent, WEBHOOK_EVENT_TYPES } from '../../src/webhooks/events.ts';

function job(overrides: Partial<JobRecord>): JobRecord {
  return {
    id: 'resp_01',
    kind: 'response',
    owner: { kind: 'account', id: 'acct_1' },
    keyId: 'key_1',
    status: 'completed',
    payload: null,
    result: { id: 'resp_01', object: 'response', status: 'completed', output: [] },
    reservationId: null,
    createdAt: 1_767_225_000_000,
    updatedAt: 1_767_225_600_999,
    expiresAt: 1_767_312_000_000,
    leaseOwner: null,
    leaseUntil: null,
    attempts: 1,
    dispatchedAt: 1_767_225_000_500,
    cost: 1_000n,
    checkpoint: null,
    nextAttemptAt: null,
    ...overrides,
  };
}

test('every end of a response and of a video has its event type; running jobs and an incomplete video have none', () => {
  assert.deepEqual(WEBHOOK_EVENT_TYPES, [
    'response.completed',
    'response.incomplete',
    'response.failed',
    'response.cancelled',
    'video.completed',
    'video.failed',
    'video.cancelled',
  ]);
  for (const status of ['completed', 'incomplete', 'failed', 'cancelled'] as const)
    assert.equal(eventTypeOf({ kind: 'response', status }), `response.${status}`);
  for (const status of ['completed', 'failed', 'cancelled'] as const) assert.equal(eventTypeOf({ kind: 'video', status }), `video.${status}`);
  for (const status of ['queued', 'in_progress'] as const) {
    assert.equal(eventTypeOf({ kind: 'response', status }), null);
    assert.equal(eventTypeOf({ kind: 'video', status }), null);
  }
  assert.equal(eventTypeOf({ kind: 'video', status: 'incomplete' }), null);
  assert.equal(jobEvent(job({ status: 'in_progress' })), null);
});

test("the body carries the job's client-visible object, the end's time in seconds and a stable event id", () => {
  const event = jobEvent(job({}))!;
  assert.match(event.id, /^evt_[0-9a-f]{32}$/);
  assert.equal(event.id, eventId('resp_01', 'response.completed'), 'the same on every instance');
  assert.notEqual(event.id, eventId('resp_01', 'response.failed'));
  assert.notEqual(event.id, eventId('resp_02', 'response.completed'));
  assert.equal(event.type, 'response.completed');
  assert.equal(event.createdAt, 1_767_225_600_999);
  assert.deepEqual(JSON.parse(event.body), {
    id: event.id,
    object: 'event',
    type: 'response.completed',
    created_at: 1_767_225_600,
    data: { id: 'resp_01', object: 'response', status: 'completed', output: [] },
  });
  assert.deepEqual(Object.keys(JSON.parse(event.body)), ['id', 'object', 'type', 'created_at', 'data']);
  assert.equal(JSON.parse(jobEvent(job({ kind: 'video', status: 'cancelled', result: null }))!.body).type, 'video.cancelled');
});
