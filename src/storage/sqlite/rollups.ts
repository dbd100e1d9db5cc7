/**
 * The usage rollups on SQLite (../usage-rollups.ts): a batch of request log rows summed by rollup
 * row in memory, then one upsert per rollup row. A trigger adding each request into both rollups
 * cost about as much as writing the request row itself (docs/performance.md, "A savepoint
 * journal, the usage rollups and the tokenizer's table"); a busy key's batch is one upsert per grain.
 *
 * Summing runs for every request the gateway logs, so it allocates little: a rollup row's key and
 * sums are made when the batch first meets it, and a sum stays a number while it is a safe integer
 * (tokens; a bigint once it would not be, and for the amounts in pico-USD, which are bigints).
 */
import { USAGE_GRAINS, USAGE_KEY_COLUMNS, USAGE_MEASURES, type UsageGrain } from '../usage-rollups.ts';
import type { requestColumns } from '../rows.ts';

type RequestColumns = ReturnType<typeof requestColumns>;
type Sum = number | bigint;

/** One rollup row's key (the period, then USAGE_KEY_COLUMNS) and its sums, in USAGE_MEASURES order. */
export interface RollupRow {
  readonly grain: UsageGrain;
  readonly key: readonly (number | string)[];
  readonly sums: Sum[];
}

const GRAINS = Object.keys(USAGE_GRAINS) as UsageGrain[];
/** The measures read from the row; `requests` (index 0) is a count. */
const SUMMED = USAGE_MEASURES.flatMap((measure, index) => (measure === 'requests' ? [] : [{ measure, index }]));
const REQUESTS = USAGE_MEASURES.indexOf('requests');
const SEPARATOR = '\u0000';

export class RollupSums {
  /** A request's rollup rows, one per grain in GRAINS order, by its hour and key. */
  readonly #rows = new Map<string, RollupRow[]>();

  /** Counts one request row in the rollup rows of every grain. */
  add(columns: RequestColumns): void {
    // '' stands for none: a NULL would never match the rollup's primary key.
    const keyColumns = USAGE_KEY_COLUMNS.map((column) => columns[column] ?? '');
    // The hour and the key joined by a separator no value holds (a day is whole hours, so the hour
    // says the day); a value that holds it (a client's model name can hold anything) falls back to
    // the key's JSON, which no joined key starts like.
    const hour = columns.created_at - (columns.created_at % USAGE_GRAINS.hour);
    const id = keyColumns.some((value) => value.includes(SEPARATOR)) ? JSON.stringify([hour, keyColumns]) : `${hour}${SEPARATOR}${keyColumns.join(SEPARATOR)}`;
    let rows = this.#rows.get(id);
    if (rows === undefined) {
      rows = GRAINS.map((grain) => ({ grain, key: [hour - (hour % USAGE_GRAINS[grain]), ...keyColumns], sums: USAGE_MEASURES.map(() => 0) }));
      this.#rows.set(id, rows);
    }
    for (const { sums } of rows) {
      sums[REQUESTS] = plus(sums[REQUESTS], 1);
      for (const { measure, index } of SUMMED) {
        const value = columns[measure];
        if (value !== 0 && value !== 0n) sums[index] = plus(sums[index], value);
      }
    }
  }

  /** Every rollup row to add: a day's row once for each of its hours in the batch (each upsert adds to it). */
  rows(): RollupRow[] {
    return [...this.#rows.values()].flat();
  }
}

/** An exact sum: a number while both are numbers and the total is a safe integer, else a bigint. */
function plus(sum: Sum, value: Sum): Sum {
  if (typeof sum === 'number' && typeof value === 'number') {
    const total = sum + value;
    if (Number.isSafeInteger(total)) return total;
  }
  return BigInt(sum) + BigInt(value);
}
