/**
 * The batching of counter operations (src/limits/script-batch.ts): the operations of one
 * event-loop turn go out as one call, each gets its own answer, keys are sent once, and a failed
 * call fails every operation it carried.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type RunBatch, ScriptBatches } from '../../src/limits/script-batch.ts';

/** A run that answers each operation with its text and its keys, and records every call. */
function recordingRun(): { run: RunBatch; calls: { keys: readonly string[]; operations: readonly string[] }[] } {
  const calls: { keys: readonly string[]; operations: readonly string[] }[] = [];
  return {
    calls,
    run: async (keys, operations) => {
      calls.push({ keys: [...keys], operations: [...operations] });
      return operations.map((operation) => `${operation}@${keys.join('|')}`);
    },
  };
}

describe('script batches', () => {
  test('the operations of one turn make one call; each gets its own answer', async () => {
    const { run, calls } = recordingRun();
    const batches = new ScriptBatches(run);
    const answers = Array.from({ length: 50 }, (_, index) => batches.current().call(`op${index}`, (answer) => answer));
    assert.equal(calls.length, 0, 'nothing is sent before the turn ends');
    assert.deepEqual(
      await Promise.all(answers),
      Array.from({ length: 50 }, (_, index) => `op${index}@`),
    );
    assert.equal(calls.length, 1);
  });

  test('a key is sent once per call, named by its index; operations of the next turn make another call', async () => {
    const { run, calls } = recordingRun();
    const batches = new ScriptBatches(run);
    const first = batches.current();
    assert.deepEqual([first.key('a'), first.key('b'), first.key('a')], [1, 2, 1]);
    const done = first.send('x');
    await done;
    const second = batches.current();
    assert.notEqual(second, first);
    assert.equal(second.key('b'), 1);
    await second.call('y', (answer) => answer);
    assert.deepEqual(calls, [
      { keys: ['a', 'b'], operations: ['x'] },
      { keys: ['b'], operations: ['y'] },
    ]);
  });

  test('a turn with more operations than one call takes goes out in several calls, in order', async () => {
    const { run, calls } = recordingRun();
    const batches = new ScriptBatches(run);
    const answers = Array.from({ length: 2_500 }, (_, index) => batches.current().call(String(index), (answer) => answer));
    assert.deepEqual(
      await Promise.all(answers),
      Array.from({ length: 2_500 }, (_, index) => `${index}@`),
    );
    assert.deepEqual(
      calls.map((call) => call.operations.length),
      [1000, 1000, 500],
    );
    assert.deepEqual(
      calls.flatMap((call) => call.operations),
      Array.from({ length: 2_500 }, (_, index) => String(index)),
    );
  });

  test('a failed call fails every operation it carried, and only those', async () => {
    let fail = true;
    const batches = new ScriptBatches(async (_keys, operations) => {
      if (fail) throw new Error('connection lost');
      return operations.map(() => 'ok');
    });
    const batch = batches.current();
    const called = batch.call('a', (answer) => answer);
    const sent = batch.send('b');
    await assert.rejects(called, /connection lost/);
    await assert.rejects(sent, /connection lost/);
    fail = false;
    assert.equal(await batches.current().call('c', (answer) => answer), 'ok');
  });

  test('a run that throws at once fails its operations rather than the process', async () => {
    const batches = new ScriptBatches(() => {
      throw new Error('not connected');
    });
    await assert.rejects(
      batches.current().call('a', (answer) => answer),
      /not connected/,
    );
  });
});
