import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyRate,
  formatRateMultiplier,
  formatUsd,
  parseRateMultiplier,
  parseScaledDecimal,
  perMillionRateToPicosPerToken,
  usdToPicos,
} from '../../src/core/money.ts';

test('USD amounts parse to exact pico-USD', () => {
  assert.equal(usdToPicos('1'), 1_000_000_000_000n);
  assert.equal(usdToPicos(0.1), 100_000_000_000n);
  assert.equal(usdToPicos('0.000000000001'), 1n);
  assert.equal(usdToPicos(1e-7), 100_000n);
  assert.equal(usdToPicos('-2.5'), -2_500_000_000_000n);
  assert.throws(() => usdToPicos('0.0000000000001'), RangeError);
  assert.throws(() => usdToPicos('1e3'), RangeError);
  assert.throws(() => usdToPicos('abc'), RangeError);
  assert.throws(() => usdToPicos(Number.NaN), RangeError);
});

test('per-million rates become integer pico-USD per token', () => {
  assert.equal(perMillionRateToPicosPerToken(2.5), 2_500_000n);
  assert.equal(perMillionRateToPicosPerToken(0.075), 75_000n);
  assert.equal(perMillionRateToPicosPerToken('0.000125'), 125n);
  assert.throws(() => perMillionRateToPicosPerToken('0.0000001'), RangeError);
  // 1,234 tokens at $0.15 / 1M = $0.0001851 exactly
  assert.equal(formatUsd(1234n * perMillionRateToPicosPerToken(0.15)), '0.0001851');
});

test('formatUsd prints the exact decimal with no trailing zeros', () => {
  assert.equal(formatUsd(0n), '0');
  assert.equal(formatUsd(1n), '0.000000000001');
  assert.equal(formatUsd(3_000_000_000_000n), '3');
  assert.equal(formatUsd(-1_500_000_000_000n), '-1.5');
  assert.equal(formatUsd(usdToPicos('12345.678901234567')), '12345.678901234567');
});

test('large exponent-form numbers expand exactly', () => {
  assert.equal(parseScaledDecimal(1e21, 0), 1_000_000_000_000_000_000_000n);
  assert.equal(parseScaledDecimal(1.5e-9, 12), 1500n);
});

test('account rate multipliers apply exactly and round a fraction up', () => {
  const rate = parseRateMultiplier('1.15');
  assert.equal(formatRateMultiplier(rate), '1.15');
  assert.equal(applyRate(100n, rate), 115n);
  assert.equal(applyRate(1n, rate), 2n); // 1.15 pico rounds up to 2
  assert.equal(applyRate(7n, parseRateMultiplier(1)), 7n);
  assert.equal(applyRate(10n, parseRateMultiplier('0')), 0n);
  assert.throws(() => parseRateMultiplier('-1'), RangeError);
});
