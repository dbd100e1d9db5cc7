/**
 * Gateway servers as real processes (`src/main.ts`), for the tests that kill them: start one on a
 * config file, fund an account through the admin API, read its balance back, and the ledger
 * identities of an account as the database's rows hold them.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { dump } from 'js-yaml';
import { after } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { usdToPicos } from '../../src/core/money.ts';
import { SQLITE_FILE_NAME } from '../../src/storage/open-store.ts';
import { freshDatabase } from './postgres.ts';
import { call } from './http.ts';
import { deleteRedisKeys, TEST_REDIS_URL, testRedisPrefix } from './redis.ts';
import { startProcess, type RunningProcess } from './processes.ts';

export const ADMIN_KEY = 'admin-secret-for-tests';

export interface Server {
  readonly process: RunningProcess;
  readonly baseUrl: string;
}

/** Starts a server on an ephemeral port with the admin API on; resolves once it listens. */
export async function startServer(configPath: string, env: Record<string, string>): Promise<Server> {
  const server = startProcess(['src/main.ts'], { PORT: '0', LOG_LEVEL: 'info', GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_CONFIG: configPath, ...env });
  try {
    const [, baseUrl] = await server.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/);
    return { process: server, baseUrl };
  } catch (error) {
    // A server that never said where it listens is stopped here: its test has no handle on it.
    await server.stop('SIGKILL');
    throw error;
  }
}

/** An account with 5 USD of credit and a key, made through the admin API. */
export async function fundedAccount(server: Server, name: string): Promise<{ accountId: string; key: string }> {
  const account = await call(server.baseUrl, 'POST', '/admin/v1/accounts', { key: ADMIN_KEY, json: { name } });
  const accountId: string = account.body.id;
  await call(server.baseUrl, 'POST', `/admin/v1/accounts/${accountId}/credit`, { key: ADMIN_KEY, json: { amount_usd: '5' } });
  const issued = await call(server.baseUrl, 'POST', '/admin/v1/keys', { key: ADMIN_KEY, json: { account_id: accountId } });
  return { accountId, key: issued.body.key as string };
}

export interface ShownBalance {
  readonly balance: bigint;
  readonly reserved: bigint;
  readonly available: bigint;
}

/** The account's balance as the admin API shows it. */
export async function shownBalance(server: Server, accountId: string): Promise<ShownBalance> {
  const view = (await call(server.baseUrl, 'GET', `/admin/v1/accounts/${accountId}`, { key: ADMIN_KEY })).body;
  return { balance: usdToPicos(view.balance_usd), reserved: usdToPicos(view.reserved_usd), available: usdToPicos(view.available_usd) };
}

/** One account's ledger as its rows hold it. */
export interface LedgerTotals {
  readonly credits: bigint;
  readonly charges: bigint;
  readonly chargeCount: bigint;
  readonly openHolds: bigint;
  readonly balance: bigint;
  readonly reserved: bigint;
}

/** The query of LedgerTotals, with the account id as its one parameter (`?1` on SQLite, `$1` on PostgreSQL). */
export const LEDGER_TOTALS_SQL = (placeholder: string) => `SELECT
  (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE owner_id = ${placeholder} AND kind = 'credit') AS credits,
  (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE owner_id = ${placeholder} AND kind = 'charge') AS charges,
  (SELECT count(*) FROM ledger_entries WHERE owner_id = ${placeholder} AND kind = 'charge') AS charge_count,
  (SELECT coalesce(sum(amount), 0) FROM reservations WHERE owner_id = ${placeholder} AND status = 'open') AS open_holds,
  balance, reserved FROM wallets WHERE owner_id = ${placeholder}`;

/** A row of LEDGER_TOTALS_SQL, whichever engine's representation of its integers. */
export function ledgerTotals(row: Record<string, unknown>): LedgerTotals {
  const big = (name: string) => BigInt(row[name] as string | number | bigint);
  return {
    credits: big('credits'),
    charges: big('charges'),
    chargeCount: big('charge_count'),
    openHolds: big('open_holds'),
    balance: big('balance'),
    reserved: big('reserved'),
  };
}

/**
 * The ledger read by `read` once no hold is open and at least one charge is written, or as it is
 * after 15 s: a job reads as ended as soon as its end is recorded, and its settlement follows it
 * (docs/jobs.md), so a client's poll can see the end before the charge.
 */
export async function settledLedger(read: () => LedgerTotals | Promise<LedgerTotals>): Promise<LedgerTotals> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const totals = await read();
    if ((totals.openHolds === 0n && totals.chargeCount > 0n) || Date.now() > deadline) return totals;
    await sleep(50);
  }
}

/** credits − charges = balance, open holds = reserved, and the admin view shows the same. */
export function assertLedgerExact(totals: LedgerTotals, shown: ShownBalance): void {
  assert.equal(totals.balance, totals.credits - totals.charges, 'balance = credits − charges');
  assert.equal(totals.reserved, totals.openHolds, 'reserved = open holds');
  assert.deepEqual(shown, { balance: totals.balance, reserved: totals.reserved, available: totals.credits - totals.charges - totals.openHolds });
}

/**
 * What a failed ledger assertion on PostgreSQL needs to be understood: the account's reservations
 * (any status; who held each, when it closed), the instances' heartbeats as old as the database's
 * clock makes them, and each server's log lines about holds and beats.
 */
export async function ledgerDiagnosis(admin: pg.Client, accountId: string, servers: readonly Server[]): Promise<string> {
  const { rows: reservations } = await admin.query(
    `SELECT id, status, amount::text, holder_kind, holder_id, lease, created_at::text, closed_at::text
     FROM reservations WHERE owner_id = $1 ORDER BY status = 'open' DESC, created_at DESC LIMIT 40`,
    [accountId],
  );
  const { rows: instances } = await admin.query(
    `SELECT id, heartbeat_at::text, ((extract(epoch FROM clock_timestamp()) * 1000)::bigint - heartbeat_at)::text AS age_ms FROM instances`,
  );
  const logLines = serverLines(servers, (line) => /lapsed|heartbeat|PostgreSQL|slice/i.test(line), 20);
  return `\nreservations: ${JSON.stringify(reservations)}\ninstances: ${JSON.stringify(instances)}\nlogs:\n${logLines}`;
}

/** The servers' log lines that pass `test` (the last `last` of each), each marked with its server's index. */
export function serverLines(servers: readonly Server[], test: (line: string) => boolean, last = Number.POSITIVE_INFINITY): string {
  return servers
    .flatMap((server, index) =>
      server.process
        .output()
        .split('\n')
        .filter(test)
        .slice(-last)
        .map((line) => `[${index}] ${line}`),
    )
    .join('\n');
}

/** A fresh PostgreSQL database for server processes to share, and a client that reads it. */
export interface ServerSchema {
  /** `DATABASE_URL` of the database: what each server process is given. */
  readonly databaseUrl: string;
  /** Connected to it (LEDGER_TOTALS_SQL with `$1`). */
  readonly admin: pg.Client;
  /** Drops the database and closes the client. */
  drop(): Promise<void>;
}

export async function serverSchema(): Promise<ServerSchema> {
  const database = await freshDatabase();
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  // Dropped when the file's tests end if a failed test did not: its open connection would keep the
  // file's process waiting forever.
  const drop = async () => {
    if (!undropped.delete(drop)) return;
    await admin.end();
    await database.drop();
  };
  undropped.add(drop);
  return { databaseUrl: database.url, admin, drop };
}

const undropped = new Set<() => Promise<void>>();
after(async () => {
  for (const drop of undropped) await drop().catch(() => {});
});

/** One account's LedgerTotals as a SQLite server's file holds them (read-only, beside the server). */
export function sqliteLedgerTotals(dataDir: string, accountId: string): LedgerTotals {
  const file = new DatabaseSync(join(dataDir, SQLITE_FILE_NAME), { readOnly: true });
  try {
    const totals = file.prepare(LEDGER_TOTALS_SQL('?1'));
    totals.setReadBigInts(true);
    return ledgerTotals(totals.get(accountId)!);
  } finally {
    file.close();
  }
}

/** Server processes sharing one PostgreSQL schema and one Redis key prefix: instances of one gateway. */
export interface Instances {
  readonly servers: readonly Server[];
  readonly database: ServerSchema;
  /** Stops every server still running (SIGTERM), drops the schema and deletes the Redis keys. */
  stop(): Promise<void>;
}

/**
 * `count` servers on `config`, one fresh schema (`prefix`) and the test Redis under a key prefix of
 * their own.
 */
export async function startInstances(prefix: string, config: object, count: number): Promise<Instances> {
  const workDir = await mkdtemp(join(tmpdir(), `gateway-${prefix}-`));
  const configPath = join(workDir, 'config.yaml');
  await writeFile(configPath, dump(config));
  const database = await serverSchema();
  const redisPrefix = testRedisPrefix();
  const env = { DATABASE_URL: database.databaseUrl, GATEWAY_DATA_DIR: join(workDir, 'data'), REDIS_URL: TEST_REDIS_URL, GATEWAY_REDIS_PREFIX: redisPrefix };
  const servers: Server[] = [];
  const stop = async () => {
    await Promise.all(servers.map((server) => server.process.stop('SIGTERM')));
    await database.drop();
    await deleteRedisKeys(redisPrefix);
    await rm(workDir, { recursive: true, force: true });
  };
  try {
    // One at a time: the first migrates the schema, and several starting at once on a busy machine
    // can take longer than a start may.
    for (let index = 0; index < count; index++) servers.push(await startServer(configPath, env));
  } catch (error) {
    await stop();
    throw error;
  }
  return { servers, database, stop };
}
