/**
 * Credit after a crash: servers killed with SIGKILL while streams hold credit, as real processes.
 * The dead server's holds come back to the wallet — on SQLite when the next server takes the file,
 * on PostgreSQL once a live instance sees the dead one's heartbeat lapse — and the ledger stays
 * exact: credits − charges = balance, open holds = reserved, balance − reserved = available.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { stringify } from 'yaml';
import { DEMO_CONFIG_PATH, loadConfigFile } from '../../src/config/load.ts';
import { usdToPicos } from '../../src/core/money.ts';
import { SQLITE_FILE_NAME } from '../../src/storage/open-store.ts';
import { call } from '../helpers/http.ts';
import { startProcess, type RunningProcess } from '../helpers/processes.ts';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN = 'admin-secret-for-tests';
/** billing.instance_lapse_seconds of the PostgreSQL instances (they beat every second). */
const LAPSE_SECONDS = 3;

let workDir: string;
let configPath: string;
before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'gateway-crash-'));
  const config = loadConfigFile(DEMO_CONFIG_PATH);
  // Streams that last well beyond the test's steps: a delta every two seconds.
  const slow = {
    ...config,
    providers: config.providers.map((provider) => ({ ...provider, simulated: { chunk_delay_ms: 2_000 } })),
    billing: { ...config.billing, instance_lapse_seconds: LAPSE_SECONDS },
  };
  configPath = join(workDir, 'slow.yaml');
  await writeFile(configPath, stringify(slow));
});
after(() => rm(workDir, { recursive: true, force: true }));

interface Server {
  readonly process: RunningProcess;
  readonly baseUrl: string;
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const server = startProcess(['src/main.ts'], { PORT: '0', LOG_LEVEL: 'info', GATEWAY_ADMIN_KEY: ADMIN, GATEWAY_CONFIG: configPath, ...env });
  const [, baseUrl] = await server.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/);
  return { process: server, baseUrl };
}

/** An account with credit and a key, made through the admin API. */
async function fundedAccount(server: Server) {
  const account = await call(server.baseUrl, 'POST', '/admin/v1/accounts', { key: ADMIN, json: { name: 'crash' } });
  const accountId: string = account.body.id;
  await call(server.baseUrl, 'POST', `/admin/v1/accounts/${accountId}/credit`, { key: ADMIN, json: { amount_usd: '5' } });
  const issued = await call(server.baseUrl, 'POST', '/admin/v1/keys', { key: ADMIN, json: { account_id: accountId } });
  return { accountId, key: issued.body.key as string };
}

/** Opens a stream and reads its first bytes: from then on it holds credit until it ends. */
async function openStream(server: Server, key: string, abort: AbortController): Promise<void> {
  const response = await fetch(`${server.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gateway/atlas-4-5', stream: true, messages: [{ role: 'user', content: 'Tell me a long story about crashes.' }] }),
    signal: abort.signal,
  });
  assert.equal(response.status, 200);
  const reader = response.body!.getReader();
  await reader.read();
  // The rest is left unread; the stream ends with the server or when the test aborts it.
  reader.read().catch(() => undefined);
}

async function balanceOf(server: Server, accountId: string) {
  const view = (await call(server.baseUrl, 'GET', `/admin/v1/accounts/${accountId}`, { key: ADMIN })).body;
  return { balance: usdToPicos(view.balance_usd), reserved: usdToPicos(view.reserved_usd), available: usdToPicos(view.available_usd) };
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await sleep(100);
    value = await read();
  }
  return value;
}

/** The ledger identities of one account, from the database's rows. */
interface LedgerTotals {
  readonly credits: bigint;
  readonly charges: bigint;
  readonly openHolds: bigint;
  readonly balance: bigint;
  readonly reserved: bigint;
}

const TOTALS_SQL = (placeholder: string) => `SELECT
  (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE owner_id = ${placeholder} AND kind = 'credit') AS credits,
  (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE owner_id = ${placeholder} AND kind = 'charge') AS charges,
  (SELECT coalesce(sum(amount), 0) FROM reservations WHERE owner_id = ${placeholder} AND status = 'open') AS open_holds,
  balance, reserved FROM wallets WHERE owner_id = ${placeholder}`;

function assertExact(totals: LedgerTotals, shown: { balance: bigint; reserved: bigint; available: bigint }) {
  assert.equal(totals.balance, totals.credits - totals.charges, 'balance = credits − charges');
  assert.equal(totals.reserved, totals.openHolds, 'reserved = open holds');
  assert.deepEqual(shown, { balance: totals.balance, reserved: totals.reserved, available: totals.credits - totals.charges - totals.openHolds });
}

describe('credit after a crash', () => {
  test('SQLite: the server restarted after a kill -9 releases the holds of the streams the dead one had open', async () => {
    const dataDir = join(workDir, 'sqlite');
    const first = await startServer({ GATEWAY_DATA_DIR: dataDir });
    const abort = new AbortController();
    let accountId: string;
    try {
      const funded = await fundedAccount(first);
      accountId = funded.accountId;
      await openStream(first, funded.key, abort);
      await openStream(first, funded.key, abort);
      // A hold open for a second is written to the file as open (docs/billing.md): wait for both.
      const file = new DatabaseSync(join(dataDir, SQLITE_FILE_NAME), { readOnly: true });
      try {
        const open = file.prepare("SELECT count(*) AS n FROM reservations WHERE status = 'open'");
        assert.equal(
          await until(
            async () => Number(open.get()!.n),
            (n) => n === 2,
            10_000,
          ),
          2,
        );
      } finally {
        file.close();
      }
      assert.ok((await balanceOf(first, accountId)).reserved > 0n);
    } finally {
      await first.process.stop('SIGKILL');
      abort.abort();
    }

    const second = await startServer({ GATEWAY_DATA_DIR: dataDir });
    try {
      // Released at start: the first answer already shows all the credit available.
      const shown = await balanceOf(second, accountId);
      assert.equal(shown.reserved, 0n);
      assert.equal(shown.available, usdToPicos('5'));
      assert.match(second.process.output(), /released the credit holds of the previous server/);
      const file = new DatabaseSync(join(dataDir, SQLITE_FILE_NAME), { readOnly: true });
      try {
        const totals = file.prepare(TOTALS_SQL('?1'));
        totals.setReadBigInts(true);
        const row = totals.get(accountId)!;
        assertExact(
          { credits: row.credits, charges: row.charges, openHolds: row.open_holds, balance: row.balance, reserved: row.reserved } as LedgerTotals,
          shown,
        );
      } finally {
        file.close();
      }
    } finally {
      assert.equal((await second.process.stop('SIGTERM')).code, 0);
    }
  });

  test(`PostgreSQL: a live instance releases the holds of one killed with kill -9 once its heartbeat lapsed (${LAPSE_SECONDS} s here), and keeps its own`, async () => {
    const schema = `test_crash_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.query(`SET search_path TO ${schema}`);
    const url = new URL(TEST_DATABASE_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const env = { DATABASE_URL: url.href, GATEWAY_DATA_DIR: join(workDir, 'postgres') };
    const doomed = await startServer(env);
    const survivor = await startServer(env);
    const abortDoomed = new AbortController();
    const abortSurvivor = new AbortController();
    try {
      const { accountId, key } = await fundedAccount(survivor);
      await openStream(doomed, key, abortDoomed);
      await openStream(doomed, key, abortDoomed);
      await openStream(survivor, key, abortSurvivor);
      const held = await balanceOf(survivor, accountId);
      const survivorHold = held.reserved / 3n;
      assert.ok(survivorHold > 0n && held.reserved === 3n * survivorHold, 'three equal holds');

      await doomed.process.stop('SIGKILL');
      abortDoomed.abort();
      const shown = await until(
        () => balanceOf(survivor, accountId),
        (balance) => balance.reserved === survivorHold,
        20_000,
      );
      assert.equal(shown.reserved, survivorHold, "the dead instance's holds are released, the live one's kept");
      assert.equal(shown.available, usdToPicos('5') - survivorHold);
      assert.match(survivor.process.output(), /released the credit holds of lapsed instances/);
      const row = (await admin.query(TOTALS_SQL('$1'), [accountId])).rows[0];
      const totals = Object.fromEntries(Object.entries(row).map(([name, value]) => [name, BigInt(value as string)]));
      assertExact(
        { credits: totals.credits, charges: totals.charges, openHolds: totals.open_holds, balance: totals.balance, reserved: totals.reserved },
        shown,
      );
    } finally {
      abortDoomed.abort();
      abortSurvivor.abort();
      await doomed.process.stop('SIGKILL');
      await survivor.process.stop('SIGTERM');
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  });
});
