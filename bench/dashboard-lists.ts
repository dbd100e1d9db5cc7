/**
 * The dashboard's lists at two sizes (`dashboard` in `--only`): on each store, a database holding
 * SMALL rows of each list and one holding LARGE, filled by a single SQL statement per table; then
 * the time of the first page and of a deep page (the page after a cursor in the middle) of the
 * accounts, one owner's credit history (with its running balance) and the audit log, through the
 * store as the dashboard reads them. Keyset pages read an index range, so the two sizes should cost
 * about the same (docs/dashboard.md, "Pages").
 */
import { medianMillis } from './stats.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { openStore, SQLITE_FILE_NAME } from '../src/storage/open-store.ts';
import type { Page, PageRequest } from '../src/storage/people.ts';
import type { Store } from '../src/storage/store.ts';

export const SIZES = [100, 100_000] as const;
const PAGE = 25;
const REPEATS = 30;
const OWNER_ID = 'acct_bench_owner';

export interface ListTiming {
  readonly engine: 'sqlite' | 'postgres';
  readonly list: 'accounts' | 'credit history' | 'audit log';
  readonly rows: number;
  /** Median milliseconds of a page read through the store. */
  readonly firstPageMs: number;
  readonly deepPageMs: number;
}

export interface DashboardListsResult {
  readonly timings: readonly ListTiming[];
}

/** Statements that fill a database with `count` rows of each list ($1 / :count). */
const FILL = {
  sqlite: [
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < :count)
     INSERT INTO accounts (id, name, community_supply, training_use, created_at) SELECT printf('acct_bench%09d', i), 'bench ' || i, 0, 0, i FROM n`,
    `INSERT INTO accounts (id, name, community_supply, training_use, created_at) VALUES ('${OWNER_ID}', 'owner', 0, 0, 0)`,
    `INSERT INTO wallets (owner_kind, owner_id, balance) VALUES ('account', '${OWNER_ID}', :count)`,
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < :count)
     INSERT INTO ledger_entries (id, owner_kind, owner_id, kind, amount, note, created_at) SELECT printf('led_bench%09d', i), 'account', '${OWNER_ID}', 'credit', 1, 'bench', i FROM n`,
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < :count)
     INSERT INTO audit_log (seq, at, actor_kind, actor_label, action, target_kind, target_id, prev_hash, hash)
     SELECT i, i, 'cli', 'cli (bench)', 'account.create', 'account', printf('acct_bench%09d', i), 'x', 'x' FROM n`,
  ],
  postgres: [
    `INSERT INTO accounts (id, name, community_supply, training_use, created_at) SELECT 'acct_bench' || lpad(i::text, 9, '0'), 'bench ' || i, false, false, i FROM generate_series(1, $1::int) i`,
    `INSERT INTO accounts (id, name, community_supply, training_use, created_at) VALUES ('${OWNER_ID}', 'owner', false, false, 0)`,
    `INSERT INTO wallets (owner_kind, owner_id, balance) VALUES ('account', '${OWNER_ID}', $1::bigint)`,
    `INSERT INTO ledger_entries (id, owner_kind, owner_id, kind, amount, note, created_at) SELECT 'led_bench' || lpad(i::text, 9, '0'), 'account', '${OWNER_ID}', 'credit', 1, 'bench', i FROM generate_series(1, $1::int) i`,
    `INSERT INTO audit_log (seq, at, actor_kind, actor_label, action, target_kind, target_id, prev_hash, hash)
     SELECT i, i, 'cli', 'cli (bench)', 'account.create', 'account', 'acct_bench' || lpad(i::text, 9, '0'), 'x', 'x' FROM generate_series(1, $1::int) i`,
  ],
};

/** Walks to the middle of a list by cursor: the cursor a deep page starts from. */
async function middleCursor<T>(pageOf: (page: PageRequest) => Promise<Page<T>>, rows: number): Promise<string | null> {
  let after: string | null = null;
  // Large steps to get there (the step's cost is not measured), then one page from there.
  const step = Math.max(PAGE, Math.floor(rows / 2));
  const page = await pageOf({ after, limit: step });
  after = page.next;
  return after;
}

async function timeLists(store: Store, engine: 'sqlite' | 'postgres', rows: number): Promise<ListTiming[]> {
  const owner = { kind: 'account', id: OWNER_ID } as const;
  const lists = [
    ['accounts', (page: PageRequest) => store.pageAccounts({}, page)],
    ['credit history', (page: PageRequest) => store.pageLedger(owner, page)],
    ['audit log', (page: PageRequest) => store.listAudit({}, page)],
  ] as const;
  const timings: ListTiming[] = [];
  for (const [list, pageOf] of lists) {
    const cursor = await middleCursor(pageOf as (page: PageRequest) => Promise<Page<unknown>>, rows);
    timings.push({
      engine,
      list,
      rows,
      firstPageMs: await medianMillis(() => pageOf({ limit: PAGE }), REPEATS),
      deepPageMs: await medianMillis(() => pageOf({ after: cursor, limit: PAGE }), REPEATS),
    });
  }
  return timings;
}

async function measureSqlite(rows: number): Promise<ListTiming[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-bench-dashboard-'));
  try {
    await (await openStore({ dataDir })).close();
    const database = new DatabaseSync(join(dataDir, SQLITE_FILE_NAME));
    try {
      database.exec('BEGIN');
      for (const sql of FILL.sqlite) database.prepare(sql).run(sql.includes(':count') ? { count: rows } : {});
      database.exec('COMMIT');
    } finally {
      database.close();
    }
    const store = await openStore({ dataDir });
    try {
      return await timeLists(store, 'sqlite', rows);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function measurePostgres(databaseUrl: string, rows: number): Promise<ListTiming[]> {
  const schema = `bench_dashboard_${process.pid}_${rows}`;
  const dataDir = tmpdir();
  await (await openStore({ databaseUrl, dataDir, schema, poolSize: 2 })).close();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`SET search_path = ${schema}`);
    for (const sql of FILL.postgres) await client.query(sql, sql.includes('$1') ? [rows] : []);
    await client.query('ANALYZE');
    const store = await openStore({ databaseUrl, dataDir, schema, poolSize: 2 });
    try {
      return await timeLists(store, 'postgres', rows);
    } finally {
      await store.close();
    }
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
}

export async function measureDashboardLists(databaseUrl: string, progress: (line: string) => void): Promise<DashboardListsResult> {
  const timings: ListTiming[] = [];
  for (const rows of SIZES) {
    progress(`dashboard lists: sqlite, ${rows} rows`);
    timings.push(...(await measureSqlite(rows)));
    progress(`dashboard lists: postgres, ${rows} rows`);
    timings.push(...(await measurePostgres(databaseUrl, rows)));
  }
  return { timings };
}
