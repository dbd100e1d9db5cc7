/** Many streams' deadlines on one timer (src/pipeline/deadlines.ts), on a clock the test moves. */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import { Deadlines } from '../../src/pipeline/deadlines.ts';

describe('Deadlines', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 }));
  afterEach(() => mock.timers.reset());

  test('each passes once, when due, unless removed before; a later one added first does not hold back an earlier one', () => {
    const deadlines = new Deadlines(Date.now);
    const passed: string[] = [];
    const at = (name: string, ms: number) => deadlines.add({ at: ms, passed: () => passed.push(name) });
    at('late', 60);
    const removed = at('removed', 10);
    at('early', 20);
    at('earliest', 5);
    removed.remove();
    mock.timers.tick(4);
    assert.deepEqual(passed, []);
    mock.timers.tick(1);
    assert.deepEqual(passed, ['earliest']);
    mock.timers.tick(15);
    assert.deepEqual(passed, ['earliest', 'early'], 'the removed one passed unseen');
    assert.equal(deadlines.size, 1);
    mock.timers.tick(39);
    assert.deepEqual(passed, ['earliest', 'early']);
    mock.timers.tick(1);
    assert.deepEqual(passed, ['earliest', 'early', 'late']);
    assert.equal(deadlines.size, 0);
    mock.timers.tick(1_000);
    assert.equal(passed.length, 3, 'each once');
  });

  test('a deadline already past passes at the timer’s next turn, not within add', () => {
    const deadlines = new Deadlines(Date.now);
    mock.timers.tick(100);
    let passed = 0;
    deadlines.add({ at: 50, passed: () => passed++ });
    assert.equal(passed, 0);
    mock.timers.tick(0);
    assert.equal(passed, 1);
  });
});
