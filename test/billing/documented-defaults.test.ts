/**
 * The reservation lifetime's default is stated in one document (docs/billing.md), and there it
 * matches the code; the others refer to it instead of repeating a number that could drift.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { DEFAULT_RESERVATION_TTL_SECONDS } from '../../src/billing/credit.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

test('the reservation lifetime default is stated once, in docs/billing.md, as the code has it', () => {
  const billing = read('docs/billing.md');
  const stated = billing.match(/`billing\.reservation_ttl_seconds` in the config, (\d+) seconds when\s+unset/);
  assert.ok(stated, 'docs/billing.md states the default');
  assert.equal(Number(stated[1]), DEFAULT_RESERVATION_TTL_SECONDS);
  for (const path of ['README.md', 'docs/idempotency.md', 'docs/operations.md']) {
    const text = read(path);
    for (const line of text.split('\n').filter((line) => line.includes('reservation_ttl_seconds'))) {
      assert.doesNotMatch(line, /\d+\s*(s\b|seconds|minutes)|reservation_ttl_seconds:\s*\d/, `${path}: ${line}`);
    }
  }
});
