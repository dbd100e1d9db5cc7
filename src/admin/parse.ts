/**
 * Wire values of the admin interfaces (HTTP and CLI) to domain values. Money arrives as a decimal
 * string and is converted exactly or refused: an amount is never rounded.
 */
import { errors } from '../core/errors.ts';
import { parseRateMultiplier, usdToPicos, type Picos, type RateMultiplier } from '../core/money.ts';
import type { OwnerRef } from '../storage/store.ts';

/** A strictly positive USD amount with at most 12 decimals ("10", "0.25"). */
export function parseCreditAmount(text: string, param: string): Picos {
  let amount: Picos;
  try {
    amount = usdToPicos(text);
  } catch {
    throw errors.invalidValue(param, `'${param}' must be a decimal USD amount with at most 12 decimal places, like "10.50".`);
  }
  if (amount <= 0n) throw errors.invalidValue(param, `'${param}' must be greater than zero.`);
  return amount;
}

/** Far above any sensible markup; keeps the stored fraction well inside 64 bits. */
const MAX_RATE = 1000n;

/** A billing multiplier ("1", "1.15"); null resets it to the configured default. */
export function parseRate(value: string | number | null, param: string): RateMultiplier | null {
  if (value === null) return null;
  let rate: RateMultiplier;
  try {
    rate = parseRateMultiplier(value);
  } catch {
    throw errors.invalidValue(param, `'${param}' must be a non-negative decimal with at most 6 decimal places, like "1.15".`);
  }
  if (rate.numerator > MAX_RATE * rate.denominator) throw errors.invalidValue(param, `'${param}' may be at most ${MAX_RATE}.`);
  return rate;
}

/**
 * A point in time for usage reports: epoch seconds ("1767225600") or an ISO 8601 date/time
 * ("2026-01-01", "2026-01-01T12:00:00Z"). Returns epoch milliseconds.
 */
export function parseSince(text: string, param: string): number {
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const millis = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(millis)) throw errors.invalidValue(param, `'${param}' must be epoch seconds or an ISO 8601 date.`);
  return millis;
}

/** One of `account_id` / `organization_id`; `required` makes giving neither a 400. */
export function ownerFromFields(fields: { readonly account_id?: string; readonly organization_id?: string }, required: boolean): OwnerRef | undefined {
  const { account_id: accountId, organization_id: organizationId } = fields;
  if (accountId !== undefined && organizationId !== undefined) {
    throw errors.invalidValue('organization_id', "Give either 'account_id' or 'organization_id', not both.");
  }
  if (accountId !== undefined) return { kind: 'account', id: accountId };
  if (organizationId !== undefined) return { kind: 'organization', id: organizationId };
  if (required) throw errors.missingParameter('account_id', 'organization_id');
  return undefined;
}
