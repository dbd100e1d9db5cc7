/**
 * Human-readable output of the `gateway` command: records as aligned `field: value` lines, lists as
 * tables. `--json` prints the admin API's JSON views instead.
 */
export interface Output {
  readonly json: boolean;
  /** One object (a created key, an account): pretty JSON or aligned fields. */
  record(view: Record<string, unknown>): void;
  /** Several objects: a JSON list or a table of the given columns. */
  list(views: readonly Record<string, unknown>[], columns: readonly string[]): void;
  /** A line for people only (hints, warnings); left out of --json output. */
  note(text: string): void;
}

export function createOutput(json: boolean, write: (text: string) => void): Output {
  return {
    json,
    record(view) {
      if (json) {
        write(`${JSON.stringify(view, null, 2)}\n`);
        return;
      }
      const entries = Object.entries(view).filter(([field]) => field !== 'object');
      const width = Math.max(...entries.map(([field]) => field.length));
      write(`${entries.map(([field, value]) => `${field.padEnd(width)}  ${cell(field, value)}`).join('\n')}\n`);
    },
    list(views, columns) {
      if (json) {
        write(`${JSON.stringify({ object: 'list', data: views }, null, 2)}\n`);
        return;
      }
      if (views.length === 0) {
        write('(none)\n');
        return;
      }
      const rows = views.map((view) => columns.map((column) => cell(column, view[column])));
      const widths = columns.map((column, index) => Math.max(column.length, ...rows.map((row) => row[index].length)));
      const line = (cells: readonly string[]) =>
        cells
          .map((text, index) => text.padEnd(widths[index]))
          .join('  ')
          .trimEnd();
      write(`${[line(columns.map((column) => column.toUpperCase())), ...rows.map(line)].join('\n')}\n`);
    },
    note(text) {
      if (!json) write(`${text}\n`);
    },
  };
}

/** Times (`*_at`, epoch seconds in the JSON views) are shown as ISO 8601 for people. */
function cell(field: string, value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : value.join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  if (typeof value === 'number' && field.endsWith('_at')) return new Date(value * 1000).toISOString();
  return String(value);
}
