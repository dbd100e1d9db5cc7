/** The retry schedule of failed deliveries (src/webhooks/retry.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { retryDelayMs } from '../../src/webhooks/retry.ts';

const schedule = { baseMs: 10_000, maxMs: 3_600_000 };

test('each step doubles the last, up to the cap', () => {
  const full = (attempts: number) => retryDelayMs(attempts, schedule, () => 0.999_999_999);
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 50, 10_000].map(full),
    [10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 1_280_000, 2_560_000, 3_600_000, 3_600_000, 3_600_000],
  );
});

test('the jitter draws between half and all of the step', () => {
  assert.equal(
    retryDelayMs(1, schedule, () => 0),
    5_000,
  );
  assert.equal(
    retryDelayMs(1, schedule, () => 0.5),
    7_500,
  );
  assert.equal(
    retryDelayMs(4, schedule, () => 0),
    40_000,
  );
  for (let i = 0; i < 200; i++) {
    const delay = retryDelayMs(3, schedule);
    assert.ok(delay >= 20_000 && delay <= 40_000, String(delay));
  }
});

test('a tiny schedule for tests still moves forward', () => {
  const tiny = { baseMs: 1, maxMs: 4 };
  assert.deepEqual(
    [1, 2, 3, 4].map((attempts) => retryDelayMs(attempts, tiny, () => 0)),
    [1, 1, 2, 2],
  );
});
