/**
 * The breaker's arithmetic (src/routing/breaker.ts) on a clock the test moves: what opens it, how
 * long it stays open, one probe at a time, and what closes it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { errors } from '../../src/core/errors.ts';
import { BreakerCell, type BreakerSettings, breakerSettings, countsAgainstEndpoint } from '../../src/routing/breaker.ts';

const SETTINGS: BreakerSettings = { enabled: true, windowMs: 10_000, minRequests: 4, failureRatePercent: 50, cooldownMs: 1_000, maxCooldownMs: 3_000 };

function attempts(cell: BreakerCell, now: number, outcomes: string): ReturnType<BreakerCell['record']> {
  let view = cell.view(now, SETTINGS);
  for (const outcome of outcomes) view = cell.record(now, outcome === 'x', SETTINGS);
  return view;
}

describe('endpoint breaker', () => {
  test('opens on the failure rate only once the window holds the minimum of attempts', () => {
    const cell = new BreakerCell();
    assert.equal(attempts(cell, 0, 'xxx').state, 'closed', 'three failures are below the minimum of four');
    const opened = attempts(cell, 0, 'x');
    assert.deepEqual(opened, { state: 'open', remainingMs: 1_000, requests: 0, failures: 0 });
  });

  test('a failure rate under the threshold keeps it closed', () => {
    const cell = new BreakerCell();
    assert.equal(attempts(cell, 0, 'x...x...x.').state, 'closed');
    assert.deepEqual(cell.view(0, SETTINGS), { state: 'closed', remainingMs: 0, requests: 10, failures: 3 });
  });

  test('attempts older than the window no longer count', () => {
    const cell = new BreakerCell();
    attempts(cell, 0, 'xxx');
    assert.equal(attempts(cell, 10_500, 'x').state, 'closed', 'the three early failures left the window');
    assert.equal(cell.view(10_500, SETTINGS).requests, 1);
  });

  test('open: no probe before the cool-down; then one at a time; a failed probe doubles the cool-down up to the maximum', () => {
    const cell = new BreakerCell();
    attempts(cell, 0, 'xxxx');
    assert.equal(cell.claimProbe(999, SETTINGS), false);
    assert.equal(cell.claimProbe(1_000, SETTINGS), true);
    assert.equal(cell.view(1_000, SETTINGS).state, 'half_open');
    assert.equal(cell.claimProbe(1_001, SETTINGS), false, 'one probe at a time');
    assert.deepEqual(cell.record(1_100, true, SETTINGS), { state: 'open', remainingMs: 2_000, requests: 0, failures: 0 });
    assert.equal(cell.claimProbe(3_100, SETTINGS), true);
    assert.equal(cell.record(3_200, true, SETTINGS).remainingMs, 3_000, 'capped at max_cooldown_ms');
  });

  test('a probe whose answer never comes lets another go once its claim lapses', () => {
    const cell = new BreakerCell();
    attempts(cell, 0, 'xxxx');
    assert.equal(cell.claimProbe(1_000, SETTINGS), true);
    assert.equal(cell.claimProbe(2_000, SETTINGS), true);
  });

  test('a success closes it, with a fresh window and the first cool-down again', () => {
    const cell = new BreakerCell();
    attempts(cell, 0, 'xxxx');
    cell.claimProbe(1_000, SETTINGS);
    assert.deepEqual(cell.record(1_050, false, SETTINGS), { state: 'closed', remainingMs: 0, requests: 0, failures: 0 });
    assert.equal(attempts(cell, 1_100, 'xxxx').remainingMs, 1_000);
  });

  test('failures of attempts that were already under way while it was open change nothing', () => {
    const cell = new BreakerCell();
    attempts(cell, 0, 'xxxx');
    assert.equal(cell.record(500, true, SETTINGS).remainingMs, 500);
  });

  test('what counts against an endpoint: connect errors, timeouts, 5xx, a 429 with a retry hint; never a client error or a cancellation', () => {
    assert.equal(countsAgainstEndpoint(errors.upstreamUnreachable(null), false), true);
    assert.equal(countsAgainstEndpoint(errors.upstreamNoAnswer(null), false), true);
    assert.equal(countsAgainstEndpoint(errors.upstreamStatus(500, 'boom', true), false), true);
    assert.equal(countsAgainstEndpoint(errors.upstreamOverloaded(undefined, true, undefined), false), true);
    assert.equal(countsAgainstEndpoint(errors.upstreamRateLimited(undefined, true, 3), false), true);
    assert.equal(countsAgainstEndpoint(errors.upstreamRateLimited(undefined, true, undefined), false), false);
    assert.equal(countsAgainstEndpoint(errors.upstreamRejected('bad', 'messages', false), false), false);
    assert.equal(countsAgainstEndpoint(errors.upstreamErrorFinish('error'), false), false);
    assert.equal(countsAgainstEndpoint(errors.upstreamUnreachable(null), true), false);
  });

  test('settings: defaults, and a maximum never below the cool-down', () => {
    assert.deepEqual(breakerSettings({}), {
      enabled: true,
      windowMs: 30_000,
      minRequests: 10,
      failureRatePercent: 50,
      cooldownMs: 5_000,
      maxCooldownMs: 120_000,
    });
    assert.equal(breakerSettings({ breakers: { cooldown_ms: 200_000 } }).maxCooldownMs, 200_000);
  });
});
