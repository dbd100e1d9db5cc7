/**
 * The dashboard's read pacer (src/dashboard/read-pacer.ts) on a clock of the test's own: heavy reads
 * run one at a time, each followed by a pause that keeps reads back to back within their share of
 * the instance's time (capped), and a queue too long is refused with a 503 to retry.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GatewayError } from '../../src/core/errors.ts';
import { MAX_PAUSE_MS, MAX_WAITING, type PacerClock, ReadPacer } from '../../src/dashboard/read-pacer.ts';

/** A clock that moves only when a read takes time or the pacer waits; it records the waits. */
function testClock(): PacerClock & { readonly waits: number[]; advance(ms: number): void } {
  let now = 0;
  const waits: number[] = [];
  return {
    waits,
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
    sleep: async (ms) => {
      waits.push(ms);
      now += ms;
    },
  };
}

describe('the dashboard read pacer', () => {
  test('a read of t ms is followed by a pause of t × (1 − share) / share: reads back to back take their share', async () => {
    const clock = testClock();
    const pacer = new ReadPacer(0.05, clock);
    await pacer.run(async () => clock.advance(10));
    await pacer.run(async () => clock.advance(4));
    await pacer.run(async () => clock.advance(0));
    assert.deepEqual(
      clock.waits.map((ms) => Math.round(ms)),
      [190, 76],
    );
    // 14 ms of reads in 280 ms: 5 %.
    assert.equal(Math.round(clock.now()), 280);
  });

  test('the pause after a long read is capped, and a read after a quiet spell starts at once', async () => {
    const clock = testClock();
    const pacer = new ReadPacer(0.02, clock);
    await pacer.run(async () => clock.advance(600));
    await pacer.run(async () => {});
    assert.deepEqual(clock.waits, [MAX_PAUSE_MS]);
    clock.advance(60_000);
    await pacer.run(async () => {});
    assert.deepEqual(clock.waits, [MAX_PAUSE_MS], 'no pause once it has passed');
  });

  test('one read at a time; a failed read frees its turn; past the queue a read is refused with a 503', async () => {
    const clock = testClock();
    const pacer = new ReadPacer(1, clock);
    let running = 0;
    let most = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const read = async () => {
      running += 1;
      most = Math.max(most, running);
      await gate;
      running -= 1;
    };
    const reads = Array.from({ length: MAX_WAITING }, () => pacer.run(read));
    await assert.rejects(pacer.run(read), (error: unknown) => error instanceof GatewayError && error.status === 503 && error.code === 'server_busy');
    release();
    await Promise.all(reads);
    assert.equal(most, 1);
    await assert.rejects(
      pacer.run(async () => {
        throw new Error('the read failed');
      }),
      /the read failed/,
    );
    assert.equal(await pacer.run(async () => 'served'), 'served');
  });
});
