/**
 * The health page's integrity panel on its own: a ledger too large to sum within the dashboard's
 * time limit renders word that the check ran out of time, in place of the panel, so that the rest
 * of the page stands (the page itself is in operations.test.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { integrityPanel } from '../../src/dashboard/health-page.ts';

test('a check that ran out of time says so instead of failing the page', () => {
  const text = integrityPanel({ done: false }).toString();
  assert.match(text, /data-testid="integrity-timed-out"/);
  assert.match(text, /ran out of time/);
  assert.doesNotMatch(text, /wallets add up/);
});

test('a check that finished lists what it found', () => {
  const owner = { kind: 'account', id: 'acct_1' } as const;
  const check = { owner, credits: 10n, charges: 3n, openHolds: 2n, balance: 7n, reserved: 2n, difference: 0n };
  assert.match(integrityPanel({ done: true, value: [check] }).toString(), /All 1 wallets add up/);
});
