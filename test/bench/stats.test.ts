import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { comparePaired, describePaired, difference, median, percent, percentile, ratio, SampleBuffer, summarize } from '../../bench/stats.ts';

describe('benchmark statistics', () => {
  test('percentile interpolates between the closest ranks', () => {
    const sorted = [1, 2, 3, 4];
    assert.equal(percentile(sorted, 0), 1);
    assert.equal(percentile(sorted, 100), 4);
    assert.equal(percentile(sorted, 50), 2.5);
    assert.ok(Math.abs(percentile(sorted, 99) - 3.97) < 1e-12);
    assert.equal(percentile([7], 99), 7);
  });

  test('percentile refuses an empty set and an out-of-range rank', () => {
    assert.throws(() => percentile([], 50), RangeError);
    assert.throws(() => percentile([1], 101), RangeError);
    assert.throws(() => percentile([1], Number.NaN), RangeError);
  });

  test('median takes the middle value, or the mean of the middle two, of an unsorted list it leaves alone', () => {
    const odd = [5, 1, 3];
    assert.equal(median(odd), 3);
    assert.deepEqual(odd, [5, 1, 3]);
    assert.equal(median([4, 1, 2, 3]), 2.5);
  });

  test('percent prints a share with one decimal', () => {
    assert.equal(percent(0.1234), '12.3 %');
    assert.equal(percent(0), '0.0 %');
  });

  test('summarize sorts a copy and reports count, mean and max', () => {
    const samples = [0.3, 0.1, 0.2, 0.4];
    const summary = summarize(samples);
    assert.deepEqual(samples, [0.3, 0.1, 0.2, 0.4]);
    assert.equal(summary?.count, 4);
    assert.ok(Math.abs((summary?.p50 ?? 0) - 0.25) < 1e-12);
    assert.ok(Math.abs((summary?.mean ?? 0) - 0.25) < 1e-12);
    assert.equal(summary?.max, 0.4);
    assert.equal(summarize([]), null);
  });

  test('ratio and difference are null when a side is missing', () => {
    assert.equal(ratio(6, 10), 0.6);
    assert.equal(ratio(6, 0), null);
    assert.equal(ratio(null, 10), null);
    assert.equal(ratio(6, undefined), null);
    assert.ok(Math.abs((difference(0.35, 0.3) ?? 0) - 0.05) < 1e-12);
    assert.equal(difference(undefined, 0.3), null);
  });

  test('SampleBuffer grows past its initial capacity without losing samples', () => {
    const buffer = new SampleBuffer();
    for (let index = 0; index < 10_000; index += 1) buffer.push(index);
    assert.equal(buffer.length, 10_000);
    assert.equal(buffer.values()[9_999], 9_999);
    assert.equal(buffer.values().length, 10_000);
  });

  test('comparePaired counts the rounds each build won and gives the two-sided sign test of that split', () => {
    const before = [10, 10, 10, 10, 10, 10, 10, 10, 10, 10];
    const after = [9, 8, 9, 7, 9, 9, 8, 9, 9, 11];
    const comparison = comparePaired(before, after);
    assert.equal(comparison.rounds, 10);
    assert.equal(comparison.lower, 9);
    assert.equal(comparison.higher, 1);
    assert.equal(comparison.medianDifference, -1);
    // 2 × (C(10,0) + C(10,1)) / 2^10 = 22 / 1024.
    assert.ok(Math.abs(comparison.signTestP - 22 / 1024) < 1e-12, String(comparison.signTestP));
    assert.equal(
      describePaired(comparison, { first: 'before', second: 'after' }, (value) => `${value.toFixed(1)} µs`),
      'after − before: median -1.0 µs; lower in 9 of 10 rounds, higher in 1 (sign test p = 0.021)',
    );
  });

  test('comparePaired: an even split, ties, and one round each way are no evidence', () => {
    assert.equal(comparePaired([1, 2, 3, 4], [2, 1, 4, 3]).signTestP, 1);
    const tied = comparePaired([5, 5, 5], [5, 5, 4]);
    assert.deepEqual([tied.lower, tied.higher], [1, 0]);
    assert.equal(tied.signTestP, 1);
    assert.equal(comparePaired([1], [1]).signTestP, 1);
    // Eight of eight the same way: 2 / 2^8.
    assert.equal(comparePaired([2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3]).signTestP, 2 / 256);
  });

  test('comparePaired refuses figures that are not paired', () => {
    assert.throws(() => comparePaired([1, 2], [1]), RangeError);
    assert.throws(() => comparePaired([], []), RangeError);
  });
});
