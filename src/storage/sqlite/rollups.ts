/**
 * The usage rollups on SQLite (../usage-rollups.ts): a batch of request log rows summed by rollup
 * row in memory, then one upsert per rollup row. A trigger adding each request into both rollups
 * cost about as much as writing the request row itself (docs/performance.md, "A savepoint
 * journal, the usage rollups and the tokenizer's table"); a busy key's batch is one upsert per grain.
 */
import { USAGE_GRAINS, USAGE_KEY_COLUMNS, USAGE_MEASURES, type UsageGrain } from '../usage-rollups.ts';
import type { requestColumns } from '../rows.ts';

type RequestColumns = ReturnType<typeof requestColumns>;

/** One rollup row's key (the period, then USAGE_KEY_COLUMNS) and its sums, in USAGE_MEASURES order. */
export interface RollupRow {
  readonly grain: UsageGrain;
  readonly key: readonly (number | string)[];
  readonly sums: bigint[];
}

const GRAINS = Object.keys(USAGE_GRAINS) as UsageGrain[];

export class RollupSums {
  readonly #rows = new Map<string, RollupRow>();

  /** Counts one request row in the rollup rows of every grain. */
  add(columns: RequestColumns): void {
    for (const grain of GRAINS) {
      const period = columns.created_at - (columns.created_at % USAGE_GRAINS[grain]);
      // '' stands for none: a NULL would never match the rollup's primary key.
      const key = [period, ...USAGE_KEY_COLUMNS.map((column) => columns[column] ?? '')];
      const id = JSON.stringify([grain, key]);
      let row = this.#rows.get(id);
      if (row === undefined) {
        row = { grain, key, sums: USAGE_MEASURES.map(() => 0n) };
        this.#rows.set(id, row);
      }
      for (const [index, measure] of USAGE_MEASURES.entries()) row.sums[index] += measure === 'requests' ? 1n : BigInt(columns[measure]);
    }
  }

  rows(): Iterable<RollupRow> {
    return this.#rows.values();
  }
}
