/**
 * The list-price block and `pricing.discount_percent` (docs/catalog.md, "Pricing", rule 3), in
 * exact integer arithmetic. A shown rate is discounted when its list price is higher. The
 * percentage is the smallest discount over the listed rates, rounded down to two decimals so it
 * never overstates.
 */
import type { Picos } from '../core/money.ts';
import { displayRate, type RateKey } from './rate-keys.ts';

export interface ListedRate {
  readonly key: RateKey;
  readonly shown: Picos;
  readonly list: Picos;
}

export interface ListAndDiscount {
  readonly list?: Partial<Record<RateKey, number>>;
  readonly discount_percent?: number;
}

export function listAndDiscount(listed: readonly ListedRate[]): ListAndDiscount {
  const discounted = listed.filter((rate) => rate.list > rate.shown);
  if (discounted.length === 0) return {};
  const list = Object.fromEntries(listed.map((rate) => [rate.key, displayRate(rate.key, rate.list)]));
  if (discounted.length < listed.length) return { list };
  const hundredths = discounted.map((rate) => ((rate.list - rate.shown) * 10_000n) / rate.list);
  const smallest = hundredths.reduce((left, right) => (right < left ? right : left));
  return { list, discount_percent: Number(smallest) / 100 };
}
