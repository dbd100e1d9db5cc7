import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import { runQueueWaitSeconds } from '../../bench/processes.ts';

describe('benchmark processes', () => {
  // Linux's per-thread scheduler statistics; elsewhere the reading is null and reports leave it out.
  const linux = existsSync(`/proc/${process.pid}/task/${process.pid}/schedstat`);

  test('the main thread has waited for the CPU a non-negative time that never decreases', { skip: !linux }, () => {
    const before = runQueueWaitSeconds(process.pid, process.pid);
    const end = performance.now() + 20;
    while (performance.now() < end);
    const after = runQueueWaitSeconds(process.pid, process.pid);
    assert.ok(before !== null && before >= 0);
    assert.ok(after !== null && after >= before);
  });

  test('a thread that does not exist has no reading', () => {
    assert.equal(runQueueWaitSeconds(process.pid, 2 ** 31 - 1), null);
  });
});
