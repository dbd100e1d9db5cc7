/** An assertion on what a decoder throws: a 400 with this code and param (and, optionally, message). */
import assert from 'node:assert/strict';
import { GatewayError } from '../../src/core/errors.ts';

export function assertRejected(decode: () => unknown, expected: { code: string; param: string; message?: RegExp }): void {
  assert.throws(decode, (error: unknown) => {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.status, 400);
    assert.equal(error.code, expected.code);
    assert.equal(error.param, expected.param);
    if (expected.message) assert.match(error.message, expected.message);
    return true;
  });
}
