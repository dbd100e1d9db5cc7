/** The arithmetic of per-minute limits (src/limits/gcra.ts): window edges, draining, resets. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { add, type BucketState, drained, resetText, retryAfterSeconds, take, WINDOW_MS } from '../../src/limits/gcra.ts';

/** Takes one unit at each of `times`, keeping the state; returns which were admitted. */
function run(limit: number, times: readonly number[]): boolean[] {
  let state: BucketState | undefined;
  return times.map((now) => {
    const verdict = take(state, limit, 1, now);
    state = verdict.state;
    return verdict.admitted;
  });
}

describe('GCRA per-minute limit', () => {
  test('a burst gets exactly the limit, for limits that do not divide the minute', () => {
    for (const limit of [1, 3, 7, 13, 60, 97, 1000]) {
      const admitted = run(
        limit,
        Array.from({ length: limit + 5 }, () => 1_000),
      );
      assert.equal(admitted.filter(Boolean).length, limit, `limit ${limit}`);
      assert.deepEqual(admitted.slice(0, limit), Array(limit).fill(true));
    }
  });

  test('after a full burst, one more fits exactly every 60/N seconds, not a millisecond earlier', () => {
    const limit = 7; // 60000 / 7 = 8571.43 ms per request
    let state: BucketState | undefined;
    for (let i = 0; i < limit; i++) state = take(state, limit, 1, 0).state;
    assert.equal(take(state, limit, 1, 8_571).admitted, false);
    const next = take(state, limit, 1, 8_572);
    assert.equal(next.admitted, true);
    assert.equal(next.remaining, 0);
    // Two intervals: 17142.86 ms after the burst.
    assert.equal(take(next.state, limit, 1, 17_142).admitted, false);
    assert.equal(take(next.state, limit, 1, 17_143).admitted, true);
  });

  test('a full minute of silence resets the bucket, not less', () => {
    const limit = 5;
    let state: BucketState | undefined;
    for (let i = 0; i < limit; i++) state = take(state, limit, 1, 0).state;
    assert.equal(drained(state, limit, WINDOW_MS - 1) > 0, true);
    assert.equal(drained(state, limit, WINDOW_MS), 0);
    assert.equal(take(state, limit, 1, WINDOW_MS).remaining, limit - 1);
    // Years later the product of time and limit passes 2^53: still simply empty.
    assert.equal(drained(state, 1_000_000_000, 1e15), 0);
  });

  test('remaining, reset and retry-after of admitted and refused requests', () => {
    const first = take(undefined, 10, 1, 0);
    assert.deepEqual([first.admitted, first.remaining, first.resetMs, first.retryAfterMs], [true, 9, 6_000, 0]);
    let state = first.state;
    for (let i = 0; i < 9; i++) state = take(state, 10, 1, 0).state;
    const refused = take(state, 10, 1, 0);
    assert.deepEqual([refused.admitted, refused.remaining, refused.resetMs, refused.retryAfterMs], [false, 0, 60_000, 6_000]);
    assert.deepEqual(refused.state, { level: 10 * WINDOW_MS, at: 0 }, 'a refusal takes nothing');
    const later = take(state, 10, 1, 1_500);
    assert.deepEqual([later.admitted, later.retryAfterMs], [false, 4_500]);
  });

  test('a pre-check leaves the bucket as it was; tokens added at settlement may overfill it', () => {
    const limit = 1000;
    const checked = take(undefined, limit, 600, 0, true);
    assert.equal(checked.admitted, true);
    assert.equal(checked.state.level, 0);
    assert.equal(checked.remaining, 400);
    const overfilled = add(undefined, limit, 1500, 0);
    const refused = take(overfilled, limit, 1, 0, true);
    assert.equal(refused.admitted, false);
    // 501 tokens must drain before 1 more fits: 501 × 60 ms.
    assert.equal(refused.retryAfterMs, 30_060);
    assert.equal(take(overfilled, limit, 1, 30_060, true).admitted, true);
  });

  test('a cost above the whole limit is refused, and told to wait until the bucket is empty', () => {
    const refused = take(undefined, 100, 101, 0, true);
    assert.equal(refused.admitted, false);
    assert.equal(retryAfterSeconds(refused.retryAfterMs), 1);
  });

  test('header and Retry-After formats', () => {
    assert.equal(resetText(0), '0ms');
    assert.equal(resetText(20.2), '21ms');
    assert.equal(resetText(1_000), '1s');
    assert.equal(resetText(1_001), '2s');
    assert.equal(resetText(360_000), '6m0s');
    assert.equal(resetText(61_500), '1m2s');
    assert.equal(retryAfterSeconds(0), 1);
    assert.equal(retryAfterSeconds(1_000), 1);
    assert.equal(retryAfterSeconds(1_001), 2);
  });
});
