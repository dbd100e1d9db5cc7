/**
 * Money is an integer count of pico-USD (1e-12 USD) held in a bigint, end to end.
 *
 * Why pico and not nano: catalog rates are USD per million tokens with up to six decimals
 * (0.000125 $/1M is a real price), so one token costs price × 1e6 pico-USD, always an integer.
 * Every charge is then tokens × rate with no rounding; only an account rate multiplier that is not
 * a whole number can produce a fraction, and that is rounded up to the next pico-USD (see applyRate).
 */
export type Picos = bigint;

export const PICOS_PER_USD = 1_000_000_000_000n;
const SCALE_DIGITS = 12;

/** Parses a decimal USD amount ("12.5", 12.5, "0.000001") into pico-USD, exactly or not at all. */
export function usdToPicos(value: string | number): Picos {
  return parseScaledDecimal(value, SCALE_DIGITS);
}

/**
 * A per-million-token USD rate as pico-USD per token: the same digits, scaled by 1e6.
 * Rates with more than six decimals cannot be represented exactly and are rejected.
 */
export function perMillionRateToPicosPerToken(ratePerMillion: string | number): Picos {
  return parseScaledDecimal(ratePerMillion, 6);
}

/** Formats pico-USD as a plain decimal string with no trailing zeros ("0.00042", "3", "-1.5"). */
export function formatUsd(picos: Picos): string {
  const negative = picos < 0n;
  const magnitude = negative ? -picos : picos;
  const whole = magnitude / PICOS_PER_USD;
  const fraction = (magnitude % PICOS_PER_USD).toString().padStart(SCALE_DIGITS, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/**
 * Parses a non-exponent decimal (given as a string or as a JS number, whose shortest round-trip
 * text is used) into an integer scaled by 10^digits. Throws RangeError when it has more decimals
 * than the scale can hold, so that no amount is silently rounded.
 */
export function parseScaledDecimal(value: string | number, digits: number): bigint {
  const text = typeof value === 'number' ? numberToPlainString(value) : value.trim();
  const match = /^([+-])?(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) throw new RangeError(`not a decimal amount: ${JSON.stringify(value)}`);
  const [, sign, whole, fraction = ''] = match;
  const trimmed = fraction.replace(/0+$/, '');
  if (trimmed.length > digits) {
    throw new RangeError(`${text} has more than ${digits} decimal places`);
  }
  const scaled = BigInt(whole) * 10n ** BigInt(digits) + BigInt(trimmed.padEnd(digits, '0') || '0');
  return sign === '-' ? -scaled : scaled;
}

function numberToPlainString(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite amount: ${value}`);
  const text = String(value);
  if (!/e/i.test(text)) return text;
  // Small or huge numbers print in exponent form; expand them without going through floats again.
  const [mantissa, exponentText] = text.toLowerCase().split('e');
  const exponent = Number(exponentText);
  const negative = mantissa.startsWith('-');
  const [intPart, fracPart = ''] = mantissa.replace('-', '').split('.');
  const digits = intPart + fracPart;
  const point = intPart.length + exponent;
  let plain: string;
  if (point <= 0) plain = `0.${'0'.repeat(-point)}${digits}`;
  else if (point >= digits.length) plain = digits + '0'.repeat(point - digits.length);
  else plain = `${digits.slice(0, point)}.${digits.slice(point)}`;
  return (negative ? '-' : '') + plain;
}

/**
 * An account's billing multiplier, held as a fraction of two integers (rate 1.15 = 115/100), so
 * that applying it is exact except for one final round-up to the pico-USD.
 */
export interface RateMultiplier {
  readonly numerator: bigint;
  readonly denominator: bigint;
}

export const UNIT_RATE: RateMultiplier = { numerator: 1n, denominator: 1n };

export function parseRateMultiplier(value: string | number): RateMultiplier {
  const digits = 6;
  const numerator = parseScaledDecimal(value, digits);
  if (numerator < 0n) throw new RangeError('a rate multiplier cannot be negative');
  return { numerator, denominator: 10n ** BigInt(digits) };
}

export function formatRateMultiplier(rate: RateMultiplier): string {
  return formatScaled((rate.numerator * 1_000_000n) / rate.denominator, 6);
}

function formatScaled(value: bigint, digits: number): string {
  const scale = 10n ** BigInt(digits);
  const whole = value / scale;
  const fraction = (value % scale).toString().padStart(digits, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}

/** Applies the account multiplier, rounding a fractional pico-USD up (never in the caller's favour). */
export function applyRate(amount: Picos, rate: RateMultiplier): Picos {
  const product = amount * rate.numerator;
  const quotient = product / rate.denominator;
  return product % rate.denominator === 0n ? quotient : quotient + 1n;
}
