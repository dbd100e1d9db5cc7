import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomToken, timeOrderedId } from '../../src/core/ids.ts';

test('time-ordered ids sort by creation and never repeat', () => {
  const ids = Array.from({ length: 5000 }, () => timeOrderedId('req'));
  assert.equal(new Set(ids).size, ids.length);
  assert.deepEqual([...ids].sort(), ids);
  assert.match(ids[0], /^req_[0-9a-z]{27}$/);
});

test('random tokens carry the requested entropy', () => {
  const token = randomToken(32);
  assert.equal(Buffer.from(token, 'base64url').length, 32);
  assert.notEqual(randomToken(), randomToken());
});
