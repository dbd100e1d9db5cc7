import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mutate } from './fuzz-kit.ts';

test('a mutation removes an array item even after another gave the array an own constructor key', () => {
  const mutated = mutate({ input: ['a', 'b', 'c'] }, [
    { kind: 'add', path: ['input'], key: 'constructor', value: 5 },
    { kind: 'delete', path: ['input', 1] },
  ]) as { input: string[] };
  assert.deepEqual([...mutated.input], ['a', 'c']);
});

test('a mutation that adds a member named length to an array leaves the array as it was', () => {
  // Seen in the request fuzzing (seed 763757574): defining an array's own `length` throws.
  const mutated = mutate({ input: ['a', 'b'] }, [{ kind: 'add', path: ['input'], key: 'length', value: 'x'.repeat(8) }]) as { input: string[] };
  assert.deepEqual(mutated.input, ['a', 'b']);
});
