import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import { cpuSecondsByThread, runQueueWaitSeconds, runSeconds } from '../../bench/processes.ts';

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
    assert.equal(runSeconds(process.pid, 2 ** 31 - 1), null);
  });

  test("the main thread's run time counts a busy loop to the nanosecond, and the process's holds it", { skip: !linux }, () => {
    const before = runSeconds(process.pid, process.pid)!;
    const end = performance.now() + 20;
    while (performance.now() < end);
    const after = runSeconds(process.pid, process.pid)!;
    // Ran at least part of the 20 ms (the rest may have been spent waiting for the CPU).
    assert.ok(after > before, `${before} → ${after}`);
    assert.ok(runSeconds(process.pid)! >= after);
  });

  test("a process's CPU is split into its main thread, V8's helper threads and the rest, which add up to the whole", { skip: !linux }, () => {
    const split = cpuSecondsByThread(process.pid);
    assert.ok(split !== null);
    assert.ok(split.main > 0 && split.v8Helpers >= 0 && split.kernel >= 0 && split.kernel <= split.total);
    assert.ok(Math.abs(split.main + split.v8Helpers + split.other - split.total) < 1e-9);
  });

  test('a process that does not exist has no split', () => {
    assert.equal(cpuSecondsByThread(2 ** 31 - 1), null);
  });
});
