/**
 * The CSV export of a usage view (RFC 4180): a row per period (and group), every figure, spend both
 * in USD and in pico-USD so that a sum of the column reconciles exactly with the ledger.
 */
import { formatUsd } from '../core/money.ts';
import type { UsageRow } from '../storage/usage.ts';
import type { UsageView } from './usage-view.ts';

/** A cell a spreadsheet would read as a formula starts with one of these (OWASP, "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

function cell(value: string): string {
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function usageCsv(view: UsageView, rows: readonly UsageRow[]): string {
  const header = [
    'period_start',
    ...(view.query.by ? [view.query.by] : []),
    'requests',
    'input_tokens',
    'output_tokens',
    'cache_read_tokens',
    'cache_write_tokens',
    'reasoning_tokens',
    'images',
    'video_seconds',
    'search_units',
    'spend_usd',
    'spend_picousd',
    'cache_savings_usd',
  ];
  const lines = rows.map((row) =>
    [
      new Date(row.period).toISOString(),
      ...(view.query.by ? [row.group ?? ''] : []),
      row.requests,
      row.inputTokens,
      row.outputTokens,
      row.cacheReadTokens,
      row.cacheWriteTokens,
      row.reasoningTokens,
      row.images,
      row.videoSeconds,
      row.searchUnits,
      formatUsd(row.cost),
      row.cost,
      formatUsd(row.cacheSavings),
    ]
      .map((value) => cell(String(value)))
      .join(','),
  );
  return `${[header.join(','), ...lines].join('\r\n')}\r\n`;
}
