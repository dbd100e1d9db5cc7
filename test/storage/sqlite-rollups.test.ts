import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestColumns } from '../../src/storage/rows.ts';
import { RollupSums } from '../../src/storage/sqlite/rollups.ts';
import { USAGE_KEY_COLUMNS, USAGE_MEASURES } from '../../src/storage/usage-rollups.ts';
import { record } from './contract/request-log.ts';

const owner = { kind: 'account', id: 'acct_sums' } as const;
const measure = (name: (typeof USAGE_MEASURES)[number]) => USAGE_MEASURES.indexOf(name);

test('rows whose key values would read alike once joined stay two rollup rows', () => {
  const sums = new RollupSums();
  // Joined with the separator between them, both keys would read "a␀b␀c".
  sums.add(requestColumns(record(owner, { model: 'a\u0000b', provider: 'c', createdAt: 5_000 })));
  sums.add(requestColumns(record(owner, { model: 'a', provider: 'b\u0000c', createdAt: 5_000 })));
  const model = USAGE_KEY_COLUMNS.indexOf('model') + 1;
  const hours = [...sums.rows()].filter((row) => row.grain === 'hour');
  assert.deepEqual(
    hours.map((row) => [row.key[model], row.sums[measure('requests')]]),
    [
      ['a\u0000b', 1],
      ['a', 1],
    ],
  );
});

test('a sum past the largest safe integer is exact, as a bigint', () => {
  const sums = new RollupSums();
  const large = Number.MAX_SAFE_INTEGER - 1;
  for (const id of ['req_1', 'req_2']) sums.add(requestColumns(record(owner, { id, outputTokens: large, cost: 7n, searchUnits: 0 })));
  const [hour, day] = [...sums.rows()];
  for (const row of [hour!, day!]) {
    assert.equal(row.sums[measure('output_tokens')], 2n * BigInt(large));
    assert.equal(row.sums[measure('cost')], 14n);
    assert.equal(row.sums[measure('requests')], 2);
    assert.equal(row.sums[measure('search_units')], 0);
  }
});
