/** Many streams' deadlines on one timer (src/pipeline/deadlines.ts). */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Deadlines } from '../../src/pipeline/deadlines.ts';

describe('Deadlines', () => {
  test('each passes once, in time, unless removed before; a later one added first does not hold back an earlier one', async () => {
    const deadlines = new Deadlines();
    const passed: string[] = [];
    const at = (name: string, inMs: number) => deadlines.add({ at: performance.now() + inMs, passed: () => passed.push(name) });
    at('late', 60);
    const removed = at('removed', 10);
    at('early', 20);
    at('earliest', 5);
    removed.remove();
    await sleep(40);
    assert.deepEqual(passed, ['earliest', 'early']);
    assert.equal(deadlines.size, 1);
    await sleep(60);
    assert.deepEqual(passed, ['earliest', 'early', 'late']);
    assert.equal(deadlines.size, 0);
  });

  test('a deadline already past passes at the next turn', async () => {
    const deadlines = new Deadlines();
    let passed = 0;
    deadlines.add({ at: performance.now() - 1, passed: () => passed++ });
    assert.equal(passed, 0);
    await sleep(5);
    assert.equal(passed, 1);
  });
});
