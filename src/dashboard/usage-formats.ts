/**
 * The usage view's page body and CSV export as row formats (storage/row-format.ts): they run on the
 * dashboard's reader thread beside the read, so that the main thread only passes the text on
 * (docs/dashboard.md, "What the dashboard costs the gateway").
 */
import type { RowFormat } from '../storage/row-format.ts';
import type { Row } from '../storage/rows.ts';
import { usageRowFrom } from '../storage/usage.ts';
import { usageCsv } from './usage-csv.ts';
import { usageBody } from './usage-render.ts';
import type { UsageView } from './usage-view.ts';

export function usagePage(rows: readonly Row[], view: UsageView): string {
  return usageBody(view, rows.map(usageRowFrom)).text;
}

export function usageExport(rows: readonly Row[], view: UsageView): string {
  return usageCsv(view, rows.map(usageRowFrom));
}

const FORMATTERS = { usagePage, usageExport };
export type UsageFormatName = keyof typeof FORMATTERS;

export function usageFormat(name: UsageFormatName, view: UsageView): RowFormat {
  return { module: import.meta.url, name, argument: view };
}
