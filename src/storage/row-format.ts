/**
 * What a dashboard read's rows are made into where they are read: the export `name` of the module
 * at `module` (a file URL), called with the rows and `argument`. That place is the dashboard's
 * reader thread (dashboard-thread.ts), on either engine, so that a page's rows and the rendering of
 * them never reach the server's event loop, and only the text crosses threads; the argument crosses
 * by structured clone. An in-memory SQLite database (tests) formats its rows where it reads them,
 * by this same function.
 */
import type { Row } from './rows.ts';

export interface RowFormat {
  readonly module: string;
  readonly name: string;
  readonly argument: unknown;
}

export async function formatRows(format: RowFormat, rows: readonly Row[]): Promise<string> {
  const formatter: unknown = (await import(format.module))[format.name];
  if (typeof formatter !== 'function') throw new Error(`${format.module} exports no formatter ${format.name}`);
  return formatter(rows, format.argument);
}
