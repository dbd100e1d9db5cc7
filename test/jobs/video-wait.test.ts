/** The wait before a video job's next look (src/jobs/video-job.ts, nextWait; docs/video.md). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextWait } from '../../src/jobs/video-job.ts';

const settings = { pollIntervalMs: 2_000, maxPollIntervalMs: 30_000, timeoutMs: 3_600_000 };

test('the first wait is the poll interval, each later one doubles up to the maximum', () => {
  const waits: number[] = [];
  let last: number | undefined;
  for (let look = 0; look < 6; look++) {
    last = nextWait(settings, last, undefined);
    waits.push(last);
  }
  assert.deepEqual(waits, [2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
});

test("the provider's Retry-After is a floor: a longer one is waited, even past the maximum; a shorter one changes nothing", () => {
  assert.equal(nextWait(settings, undefined, 5_000), 5_000);
  assert.equal(nextWait(settings, 4_000, 1_000), 8_000);
  assert.equal(nextWait(settings, 30_000, 120_000), 120_000);
  assert.equal(nextWait(settings, 120_000, undefined), 30_000, 'back to the backoff once the provider stops asking');
});
