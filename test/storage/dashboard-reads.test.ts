/**
 * The dashboard's reads stop at their time limit, on both engines: a statement past it ends with
 * UsageQueryTimeout (SQLite: in the reader's worker, or on an in-memory database's own connection;
 * PostgreSQL: the dashboard pool's statement_timeout), and the reader goes on serving after it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { GatewayError } from '../../src/core/errors.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { openPostgresDatabase } from '../../src/storage/postgres/database.ts';
import { dashboardQuery, openPostgresDashboardReader } from '../../src/storage/postgres/dashboard-reader.ts';
import { MEMORY_DATABASE, openSqliteDatabase } from '../../src/storage/sqlite/database.ts';
import { openSqliteDashboardReader, WITHIN_LIMIT } from '../../src/storage/sqlite/dashboard-reader.ts';
import { UsageQueryTimeout } from '../../src/storage/usage.ts';
import { TEST_DATABASE_URL } from '../helpers/postgres.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'gateway-dashboard-reads-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

/** Rows enough that reading them all takes longer than a limit already passed. */
const MANY_ROWS = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) SELECT count(*) AS rows FROM n WHERE ${WITHIN_LIMIT}`;

/** The nice value of each thread of this process, by thread id (Linux; the main thread's id is the pid). */
function threadNiceValues(): Map<number, number> {
  // Field 19 of /proc/<pid>/task/<tid>/stat, counted after the parenthesized command name.
  return new Map(
    readdirSync('/proc/self/task').map((tid) => [Number(tid), Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16])]),
  );
}

/** Rows as plain objects (node:sqlite gives null-prototype ones; a worker's arrive cloned). */
const plain = (rows: readonly object[]) => rows.map((row) => ({ ...row }));

describe('dashboard reads on SQLite', () => {
  for (const file of [join(dataDir, 'reads.sqlite'), MEMORY_DATABASE]) {
    test(`a statement past its limit ends with a timeout, and the next read is served (${file === MEMORY_DATABASE ? 'in memory' : 'worker'})`, async () => {
      const database = openSqliteDatabase(file);
      database.exec('CREATE TABLE IF NOT EXISTS t (x INTEGER)');
      const expired = openSqliteDashboardReader(database, -1);
      await assert.rejects(expired.all(MANY_ROWS, []), UsageQueryTimeout);
      await assert.rejects(expired.all(MANY_ROWS, []), UsageQueryTimeout);
      // A read to be made into a page stops at the same limit, before anything is formatted.
      await assert.rejects(expired.formatted(MANY_ROWS, [], { module: 'data:text/javascript,', name: 'never', argument: null }), UsageQueryTimeout);
      await expired.close();
      // One reader per connection, as a store has: an in-memory one registers its limit on the store's own.
      const served = openSqliteDashboardReader(database, 60_000);
      try {
        database.exec('INSERT INTO t VALUES (7)');
        assert.deepEqual(plain(await served.all(`SELECT x FROM t WHERE ${WITHIN_LIMIT}`, [])), [{ x: 7n }]);
        assert.deepEqual(plain(await served.all(MANY_ROWS, [])), [{ rows: 100000n }]);
        if (file !== MEMORY_DATABASE && process.platform === 'linux') {
          // The reader's thread yields the CPU to the event loop: it alone runs at the lowest priority.
          const threads = threadNiceValues();
          assert.deepEqual(
            [...threads.values()].filter((nice) => nice !== threads.get(process.pid)),
            [19],
          );
        }
      } finally {
        await served.close();
        database.close();
      }
    });
  }
});

describe('dashboard reads on PostgreSQL', () => {
  test("a statement past the pool's statement_timeout ends with a timeout, and the pool serves the next", async () => {
    const database = openPostgresDatabase({ connectionString: TEST_DATABASE_URL, schema: null, poolSize: 1, logger: silentLogger, statementTimeoutMs: 50 });
    try {
      await assert.rejects(dashboardQuery(database, 'SELECT pg_sleep(2)', []), UsageQueryTimeout);
      assert.deepEqual(await dashboardQuery(database, 'SELECT 1 AS one', []), [{ one: 1 }]);
    } finally {
      await database.close();
    }
  });

  test('the reads run on a thread of their own at the lowest priority: a timeout, an unreachable server and a bad statement come back as such, and the next read is served', async () => {
    const options = { schema: null, poolSize: 1, logger: silentLogger, statementTimeoutMs: 50 };
    const reader = openPostgresDashboardReader({ ...options, connectionString: TEST_DATABASE_URL });
    const unreachable = openPostgresDashboardReader({ ...options, connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    try {
      await assert.rejects(reader.all('SELECT pg_sleep(2)', []), UsageQueryTimeout);
      await assert.rejects(reader.all('SELECT no_such_column', []), /no_such_column/);
      assert.deepEqual(plain(await reader.all('SELECT $1::int AS one', [1])), [{ one: 1 }]);
      await assert.rejects(unreachable.all('SELECT 1', []), (error: unknown) => error instanceof GatewayError && error.code === 'storage_unavailable');
      if (process.platform === 'linux') {
        const threads = threadNiceValues();
        assert.deepEqual(
          [...threads.values()].filter((nice) => nice !== threads.get(process.pid)),
          [19, 19],
        );
      }
    } finally {
      await reader.close();
      await unreachable.close();
    }
  });
});
