/**
 * When a stopping server closes its connections after cutting its streams (src/http/drain.ts): a
 * grace after the last cut stream has ended, however long the streams take to settle, or at the
 * backstop. The process-level drain is test/platform/drain.test.ts.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { mock } from 'node:test';
import { CUT_BACKSTOP_MS, CUT_GRACE_MS, Drain } from '../../src/http/drain.ts';

describe('cutting the streams of a stopping server', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  test('the streams are told why; the connections close a grace after the last one ended, not before', () => {
    const drain = new Drain();
    const told: string[][] = [[], []];
    const streams = told.map((reasons) => ({ cut: (reason: { message: string }) => reasons.push(reason.message) }));
    const links = streams.map((stream) => drain.opened(stream));
    const ends = links.map((link) => () => drain.ended(link));
    let closed = 0;
    const unended: number[] = [];
    drain.cutStreams((count) => {
      closed++;
      unended.push(count);
    });
    assert.deepEqual(
      told,
      [['The server is shutting down; retry the request.'], ['The server is shutting down; retry the request.']],
      'each stream is told once',
    );
    assert.equal(drain.cutWith?.message, 'The server is shutting down; retry the request.');
    assert.equal(drain.draining, true);
    // Settling takes a while (a database write, the tokenizer's first load on a busy machine).
    mock.timers.tick(CUT_GRACE_MS * 3);
    ends[0]();
    ends[0]();
    mock.timers.tick(CUT_GRACE_MS * 3);
    assert.equal(closed, 0, 'a stream still settling keeps the connections open');
    ends[1]();
    mock.timers.tick(CUT_GRACE_MS - 1);
    assert.equal(closed, 0);
    mock.timers.tick(1);
    assert.equal(closed, 1);
    assert.deepEqual(unended, [0], 'every cut stream had ended');
    mock.timers.tick(CUT_BACKSTOP_MS);
    drain.cutStreams(() => closed++);
    assert.equal(closed, 1, 'once');
    assert.equal(told[0].length, 1, 'a stream is cut once');
  });

  test('a stream begun after the cut is not cut; one that ended before it is not told', () => {
    const drain = new Drain();
    const reasons: string[] = [];
    const early = { cut: () => reasons.push('early') };
    drain.ended(drain.opened(early));
    drain.cutStreams(() => undefined);
    drain.opened({ cut: () => reasons.push('late') });
    assert.deepEqual(reasons, []);
  });

  test('with no stream open, a grace after the cut; with one that never ends, at the backstop', () => {
    const none = new Drain();
    let closedNone = 0;
    none.cutStreams(() => closedNone++);
    mock.timers.tick(CUT_GRACE_MS);
    assert.equal(closedNone, 1);

    const stuck = new Drain();
    stuck.opened({ cut: () => undefined });
    let closedStuck = 0;
    let unended = -1;
    stuck.cutStreams((count) => {
      closedStuck++;
      unended = count;
    });
    mock.timers.tick(CUT_BACKSTOP_MS - 1);
    assert.equal(closedStuck, 0);
    mock.timers.tick(1);
    assert.equal(closedStuck, 1);
    assert.equal(unended, 1, 'the stream that never ended is counted (the server logs it)');
  });
});
