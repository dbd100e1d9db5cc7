/**
 * Usage analytics at scale (`dashboard` in `--only`): on each store, a database filled with ROWS
 * request log rows over 30 days by a single SQL statement, the rollups then summed from the rows
 * with the statements PostgreSQL's request log batch insert uses (the same sums as SQLite's writer
 * makes batch by batch), then the median time of what the dashboard reads, through the
 * store and its dashboard connection: the usage page's view (30 days by day, by model), a filtered
 * view (7 days by hour of one key and model, by status), a month's CSV export (30 days by hour, by
 * key), each read and made into its page's body or the export as the dashboard makes them, and the
 * request log, request and health pages' reads (timeRequestPages).
 */
import { medianMillis } from './stats.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { healthReads } from '../src/dashboard/health-page.ts';
import { usageFormat } from '../src/dashboard/usage-formats.ts';
import type { UsageView } from '../src/dashboard/usage-view.ts';
import { openStore, SQLITE_FILE_NAME } from '../src/storage/open-store.ts';
import type { Store } from '../src/storage/store.ts';
import type { UsageQuery } from '../src/storage/usage.ts';
import { rollupInserts } from '../src/storage/usage-rollups.ts';

export const ROWS = 1_000_000;
const DAY = 86_400_000;
const DAYS = 30;
const REPEATS = 10;
/** The bars: a page within PAGE_BAR_MS, an export within EXPORT_BAR_MS. */
export const PAGE_BAR_MS = 300;
export const EXPORT_BAR_MS = 5_000;
const ACCOUNTS = 20;
const KEYS = 50;
const MODELS = ['gateway/atlas-4-5', 'gateway/atlas-mini', 'gateway/nova-pro', 'gateway/nova-lite', 'gateway/pics', 'gateway/embed'];
const PROVIDERS = ['openai-main', 'anthropic-main', 'backup'];
const ROUTES = ['chat', 'messages', 'responses'];
const STATUSES = ['completed', 'completed', 'completed', 'completed', 'completed', 'completed', 'completed', 'failed', 'incomplete', 'cancelled'];

export interface UsageTiming {
  readonly engine: 'sqlite' | 'postgres';
  readonly what: string;
  /** Median milliseconds. */
  readonly ms: number;
  readonly barMs: number;
}

export interface DashboardUsageResult {
  readonly rows: number;
  readonly fillSeconds: Readonly<Record<'sqlite' | 'postgres', number>>;
  readonly timings: readonly UsageTiming[];
  readonly note: string;
}

/** SQL of one of `list`, chosen by the row number times `salt`. */
const pick = (list: readonly string[], salt: number) =>
  `(CASE (i * ${salt}) % ${list.length} ${list.map((item, index) => `WHEN ${index} THEN '${item}'`).join(' ')} END)`;

/** SQL of the i-th generated row's values, in the engine's spelling of a few functions; rows end before `end`. */
function generated(engine: 'sqlite' | 'postgres', end: number): string {
  const pad = (what: string, prefix: string) => (engine === 'sqlite' ? `printf('${prefix}%04d', ${what})` : `'${prefix}' || lpad((${what})::text, 4, '0')`);
  const status = pick(STATUSES, 7);
  return `${pad('i', 'req_bench_')} || '_' || i, 'account', ${pad(`(i % ${KEYS}) % ${ACCOUNTS}`, 'acct_bench_')}, ${pad(`i % ${KEYS}`, 'key_bench_')},
    ${pick(ROUTES, 3)}, ${pick(MODELS, 11)}, ${pick(PROVIDERS, 5)}, 'upstream', ${status},
    CASE ${status} WHEN 'failed' THEN 502 WHEN 'cancelled' THEN 499 ELSE 200 END, ${engine === 'sqlite' ? '0' : 'false'},
    100 + i % 900, i % 50, 0, 50 + i % 400, i % 20, 0,
    CASE ${status} WHEN 'failed' THEN 0 WHEN 'cancelled' THEN 0 ELSE 1000000 + i % 5000000 END,
    NULL, ${end} - (i * ${DAYS * DAY}) / ${ROWS} - 1, 500, 100, NULL, '[]', ${end} + ${DAY},
    ${attempts(engine, status)}`;
}

/** A row's upstream attempts as the pipeline writes them: one call, failed (502) or served, of varying times. */
function attempts(engine: 'sqlite' | 'postgres', status: string): string {
  const number = (what: string) => (engine === 'sqlite' ? `CAST(${what} AS TEXT)` : `(${what})::text`);
  const head = `'[{"provider":"' || ${pick(PROVIDERS, 5)} || '","upstreamModel":"upstream","startMs":0,'`;
  const served = `'"outcome":"served","firstByteMs":' || ${number('40 + i % 200')} || ',"durationMs":' || ${number('300 + i % 900')} || '}]'`;
  const failed = `'"outcome":"failed","firstByteMs":null,"durationMs":' || ${number('20 + i % 80')} || ',"status":502,"errorCode":"upstream_error","message":"bad gateway"}]'`;
  return `${head} || CASE ${status} WHEN 'failed' THEN ${failed} ELSE ${served} END`;
}

const COLUMNS = `id, owner_kind, owner_id, key_id, route, model, provider, upstream_model, status, http_status, stream,
  input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, reasoning_tokens, search_units, cost,
  error_code, created_at, duration_ms, first_byte_ms, output, blob_keys, expires_at, attempts`;

/** The account the measured pages read, as a member would. */
const ACCOUNT = 'acct_bench_0003';
const KEY = 'key_bench_0003';

function accountsSql(engine: 'sqlite' | 'postgres'): string[] {
  return Array.from(
    { length: ACCOUNTS },
    (_, index) =>
      `INSERT INTO accounts (id, name, community_supply, training_use, created_at) VALUES ('acct_bench_${String(index).padStart(4, '0')}', 'bench ${index}', ${engine === 'sqlite' ? '0, 0' : 'false, false'}, 0)`,
  );
}

function view(query: UsageQuery): UsageView {
  const day = (millis: number) => new Date(millis).toISOString().slice(0, 10);
  return { query, fromDay: day(query.from), toDay: day(query.to - DAY), fixed: new Set() };
}

/** The measured reads. */
async function timeReads(store: Store, engine: 'sqlite' | 'postgres', end: number): Promise<UsageTiming[]> {
  const month: UsageQuery = { grain: 'day', from: end - DAYS * DAY, to: end, filter: {}, by: 'model' };
  const memberMonth: UsageQuery = { ...month, filter: { account: ACCOUNT } };
  const filtered: UsageQuery = { grain: 'hour', from: end - 7 * DAY, to: end, filter: { key: KEY, model: MODELS[3]! }, by: 'status' };
  const exported: UsageQuery = { grain: 'hour', from: end - DAYS * DAY, to: end, filter: {}, by: 'key' };
  // A page's body as the dashboard makes it: read and rendered together (on SQLite, on the reader thread).
  const page = (query: UsageQuery) => store.usageText(query, usageFormat('usagePage', view(query)));
  return [
    { engine, what: 'usage page: 30 days by day, by model (operator)', ms: await medianMillis(() => page(month), REPEATS), barMs: PAGE_BAR_MS },
    { engine, what: 'usage page: 30 days by day, by model (a member)', ms: await medianMillis(() => page(memberMonth), REPEATS), barMs: PAGE_BAR_MS },
    {
      engine,
      what: 'filtered: 7 days by hour, a key and a model, by status',
      ms: await medianMillis(() => page(filtered), REPEATS),
      barMs: PAGE_BAR_MS,
    },
    ...(await timeRequestPages(store, engine, end)),
    {
      engine,
      what: 'CSV export: 30 days by hour, by key',
      ms: await medianMillis(() => store.usageText(exported, usageFormat('usageExport', view(exported))), REPEATS),
      barMs: EXPORT_BAR_MS,
    },
  ];
}

/**
 * The request log, request and health pages' reads, as the pages make them (src/dashboard): pages of
 * 50 through the store's dashboard connection, a deep page by its keyset cursor (the time and id of
 * the last row of the page before, here a row 15 days back), the request page's row, hold and
 * owner, and the health page's database reads (the endpoints' last hour among them).
 */
async function timeRequestPages(store: Store, engine: 'sqlite' | 'postgres', end: number): Promise<UsageTiming[]> {
  const owner = { kind: 'account', id: ACCOUNT } as const;
  const page = { limit: 50 };
  const deep = { after: `${end - 15 * DAY}~req_bench_`, limit: 50 };
  const timed = async (what: string, read: () => Promise<unknown>): Promise<UsageTiming> => ({
    engine,
    what,
    ms: await medianMillis(read, REPEATS),
    barMs: PAGE_BAR_MS,
  });
  const id = (await store.pageRequests({ owner }, deep)).items[0]!.id;
  return [
    await timed('request log: first page (operator, every owner)', () => store.pageRequests({}, page)),
    await timed('request log: first page (a member)', () => store.pageRequests({ owner }, page)),
    await timed('request log: a page 15 days deep (operator, keyset)', () => store.pageRequests({}, deep)),
    await timed('request log: a page 15 days deep (a member, keyset)', () => store.pageRequests({ owner }, deep)),
    await timed('request log: filtered (a member, a model, last 7 days)', () => store.pageRequests({ owner, model: MODELS[3]!, from: end - 7 * DAY }, page)),
    await timed('request log: filtered (operator, a key, failed)', () => store.pageRequests({ keyId: KEY, status: 'failed' }, page)),
    await timed('request page: the row, its hold and its owner', async () => {
      const record = await store.getRequest(id);
      return Promise.all([store.holdOf({ requestId: id }), store.getAccount(record!.owner.id)]);
    }),
    await timed('health page: its database reads (endpoints over the last hour)', () => healthReads(store, Date.now())),
  ];
}

async function measureSqlite(end: number, progress: (line: string) => void): Promise<{ fill: number; timings: UsageTiming[] }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-bench-usage-'));
  try {
    await (await openStore({ dataDir })).close();
    const file = join(dataDir, SQLITE_FILE_NAME);
    const database = new DatabaseSync(file);
    const started = performance.now();
    try {
      database.exec('BEGIN');
      for (const sql of accountsSql('sqlite')) database.exec(sql);
      database.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
        INSERT INTO request_log (${COLUMNS}) SELECT ${generated('sqlite', end)} FROM n`);
      const rollups = rollupInserts('request_log');
      database.exec(rollups.hourly);
      database.exec(rollups.daily);
      database.exec('COMMIT');
      database.exec('ANALYZE');
    } finally {
      database.close();
    }
    const fill = (performance.now() - started) / 1000;
    progress(`dashboard usage: sqlite filled in ${fill.toFixed(0)} s`);
    const store = await openStore({ dataDir });
    try {
      return { fill, timings: await timeReads(store, 'sqlite', end) };
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function measurePostgres(databaseUrl: string, end: number, progress: (line: string) => void): Promise<{ fill: number; timings: UsageTiming[] }> {
  const schema = `bench_usage_${process.pid}`;
  const dataDir = tmpdir();
  await (await openStore({ databaseUrl, dataDir, schema, poolSize: 2 })).close();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`SET search_path = ${schema}`);
    const started = performance.now();
    for (const sql of accountsSql('postgres')) await client.query(sql);
    await client.query(`INSERT INTO request_log (${COLUMNS}) SELECT ${generated('postgres', end)} FROM generate_series(1, ${ROWS}) i`);
    const rollups = rollupInserts('request_log');
    await client.query(rollups.hourly);
    await client.query(rollups.daily);
    await client.query('ANALYZE');
    const fill = (performance.now() - started) / 1000;
    progress(`dashboard usage: postgres filled in ${fill.toFixed(0)} s`);
    const store = await openStore({ databaseUrl, dataDir, schema, poolSize: 2 });
    try {
      return { fill, timings: await timeReads(store, 'postgres', end) };
    } finally {
      await store.close();
    }
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
}

export async function measureDashboardUsage(databaseUrl: string, progress: (line: string) => void): Promise<DashboardUsageResult> {
  const end = Date.now() - (Date.now() % DAY) + DAY;
  progress(`dashboard usage: sqlite, ${ROWS} request rows over ${DAYS} days`);
  const sqlite = await measureSqlite(end, progress);
  progress(`dashboard usage: postgres, ${ROWS} request rows over ${DAYS} days`);
  const postgres = await measurePostgres(databaseUrl, end, progress);
  return {
    rows: ROWS,
    fillSeconds: { sqlite: sqlite.fill, postgres: postgres.fill },
    timings: [...sqlite.timings, ...postgres.timings],
    note: "each page's reads through the store, as the page makes them; the HTML is not rendered",
  };
}
