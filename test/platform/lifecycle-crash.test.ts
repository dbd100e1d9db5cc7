/**
 * A metered call killed at each step boundary of its lifecycle (docs/architecture.md, "The
 * lifecycle of a metered call"), as real server processes killed with SIGKILL by the test-only
 * crash point (`GATEWAY_CRASH_AT`, src/core/crash-point.ts), on SQLite and on PostgreSQL, for
 * each driver: a one-shot chat completion, a streamed one, a background response (a job) and a
 * video job (start and poll). Each case runs on an account of its own; a server without a crash
 * point then finishes what the dead ones left (the holds of a dead process, the jobs it held, the
 * holds of ended jobs). Every account ends with its ledger exact and no hold open: charged exactly
 * once when the crash came after the settlement (or after a job's recorded end), never otherwise;
 * at most one request log row, exactly one where the step that writes it was passed (docs/jobs.md,
 * "The order of a job's end", says which rows a crash loses); and one webhook event per job.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { dump } from 'js-yaml';
import { DEMO_CONFIG_PATH, loadConfigFile } from '../../src/config/load.ts';
import type { CallStep } from '../../src/core/crash-point.ts';
import { SQLITE_FILE_NAME } from '../../src/storage/open-store.ts';
import { call } from '../helpers/http.ts';
import {
  ADMIN_KEY,
  assertLedgerExact,
  fundedAccount,
  LEDGER_TOTALS_SQL,
  type LedgerTotals,
  ledgerTotals,
  type Server,
  type ServerSchema,
  serverSchema,
  shownBalance,
  startServer,
} from '../helpers/servers.ts';

type Driver = 'one-shot' | 'stream' | 'background' | 'video';

interface Case {
  readonly driver: Driver;
  readonly step: CallStep;
  /** One charge (the crash came after the charge was decided), or none (the hold goes back). */
  readonly charged: boolean;
  /** The request log rows the account ends with (0 or 1). */
  readonly rows: 0 | 1;
}

/**
 * The cases, and what each must end with. A job killed before its end is recorded is taken over
 * and failed (a failed row, no charge; a video resumes from its checkpoint and is charged once); a
 * job ended is finished from its recorded cost.
 */
const CASES: readonly Case[] = [
  ...(['one-shot', 'stream'] as const).flatMap((driver): Case[] => [
    { driver, step: 'attempted', charged: false, rows: 0 },
    { driver, step: 'metered', charged: false, rows: 0 },
    { driver, step: 'settled', charged: true, rows: 0 },
    { driver, step: 'recorded', charged: true, rows: 1 },
  ]),
  { driver: 'background', step: 'attempted', charged: false, rows: 1 },
  { driver: 'background', step: 'metered', charged: false, rows: 1 },
  { driver: 'background', step: 'admitted', charged: true, rows: 1 },
  { driver: 'background', step: 'settled', charged: true, rows: 0 },
  { driver: 'background', step: 'recorded', charged: true, rows: 1 },
  // A video killed before its end is resumed from its checkpoint by the next worker, and completed once.
  { driver: 'video', step: 'attempted', charged: true, rows: 1 },
  { driver: 'video', step: 'metered', charged: true, rows: 1 },
  { driver: 'video', step: 'admitted', charged: true, rows: 1 },
  { driver: 'video', step: 'settled', charged: true, rows: 0 },
  { driver: 'video', step: 'recorded', charged: true, rows: 1 },
];

const CHAT_MODEL = 'gateway/atlas-4-5';
const VIDEO_MODEL = 'gateway/reel-3';

let workDir: string;
let configPath: string;
let hooks: HttpServer;
/** Webhook event ids received, by job id. */
const events = new Map<string, Set<string>>();

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'gateway-lifecycle-crash-'));
  const config = loadConfigFile(DEMO_CONFIG_PATH);
  const quick = {
    ...config,
    providers: config.providers.map((provider) => ({ ...provider, simulated: { chunk_delay_ms: 0, latency_ms: 0, video_delay_ms: 100 } })),
    billing: { ...config.billing, instance_lapse_seconds: 3 },
    jobs: { lease_seconds: 2, poll_interval_ms: 100 },
    videos: { poll_interval_ms: 50, max_poll_interval_ms: 100 },
    webhooks: { allow_private_addresses: true, poll_interval_ms: 100, retry_base_ms: 100, retry_max_ms: 500 },
  };
  configPath = join(workDir, 'config.yaml');
  await writeFile(configPath, dump(quick));
  hooks = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const event = JSON.parse(body) as { data?: { id?: string } };
      const jobId = event.data?.id;
      if (jobId) events.set(jobId, (events.get(jobId) ?? new Set()).add(String(request.headers['webhook-id'])));
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
});
after(async () => {
  await new Promise((resolve) => hooks.close(resolve));
  await rm(workDir, { recursive: true, force: true });
});

interface Started {
  readonly accountId: string;
  readonly key: string;
  /** The job's id (a background response or a video). */
  readonly jobId?: string;
}

/** Sends the case's request; the server dies at the crash point while (or after) answering it. */
async function send(server: Server, driver: Driver, key: string): Promise<string | undefined> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const post = (path: string, body: object) => fetch(`${server.baseUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const messages = [{ role: 'user', content: 'Say something about crashes.' }];
  try {
    switch (driver) {
      case 'one-shot':
        await (await post('/v1/chat/completions', { model: CHAT_MODEL, messages })).text();
        return undefined;
      case 'stream':
        await (await post('/v1/chat/completions', { model: CHAT_MODEL, messages, stream: true })).text();
        return undefined;
      case 'background': {
        const queued = await post('/v1/responses', { model: CHAT_MODEL, input: 'Say something about crashes.', background: true });
        return ((await queued.json()) as { id: string }).id;
      }
      case 'video': {
        const queued = await post('/v1/videos/generations', { model: VIDEO_MODEL, prompt: 'A server falling over.' });
        return ((await queued.json()) as { id: string }).id;
      }
    }
  } catch {
    // The connection died with the server: the request's fate is read from the database.
    return undefined;
  }
}

/** Starts a server armed at the case's step, runs the case's request on a fresh account, and waits for the kill. */
async function crash(env: Record<string, string>, index: number, crashCase: Case): Promise<Started> {
  const server = await startServer(configPath, { ...env, GATEWAY_CRASH_AT: crashCase.step });
  try {
    const { accountId, key } = await fundedAccount(server, `crash-${index}`);
    if (crashCase.driver === 'background' || crashCase.driver === 'video') {
      const hook = await call(server.baseUrl, 'POST', '/admin/v1/webhooks', {
        key: ADMIN_KEY,
        json: { account_id: accountId, url: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook` },
      });
      assert.equal(hook.status, 200, hook.text);
    }
    const jobId = await send(server, crashCase.driver, key);
    const exited = await Promise.race([server.process.exited, sleep(30_000).then(() => undefined)]);
    assert.equal(exited?.signal, 'SIGKILL', `${crashCase.driver} at ${crashCase.step}: the server killed itself\n${server.process.output().slice(-2000)}`);
    return { accountId, key, jobId };
  } finally {
    await server.process.stop('SIGKILL');
  }
}

interface Reader {
  totals(accountId: string): Promise<LedgerTotals>;
  rows(accountId: string): Promise<number>;
  jobIds(accountId: string): Promise<string[]>;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await sleep(100);
  }
}

/** Runs a server without a crash point until the account's jobs have ended and its holds are finished. */
async function finishJobs(env: Record<string, string>, reader: Reader, accountId: string): Promise<void> {
  const server = await startServer(configPath, env);
  try {
    const totals = await until(
      () => reader.totals(accountId),
      (value) => value.openHolds === 0n,
    );
    assert.equal(totals.openHolds, 0n, 'the resumed job ended');
  } finally {
    await server.process.stop('SIGTERM');
  }
}

/** Runs every case on one store, then a clean server, and checks what each account ends with. */
async function runCases(env: Record<string, string>, reader: Reader): Promise<void> {
  const started: Started[] = [];
  for (const [index, crashCase] of CASES.entries()) {
    const case_ = await crash(env, index, crashCase);
    started.push(case_);
    // A job left running or with its hold open is finished by whichever server runs next (taken over
    // once its lease lapses, or reconciled): one without a crash point finishes it first. Else the
    // next case's server could finish it, and die at its own crash point in the middle of it.
    if (crashCase.driver === 'video' || crashCase.driver === 'background') await finishJobs(env, reader, case_.accountId);
  }
  const survivor = await startServer(configPath, env);
  try {
    for (const [index, crashCase] of CASES.entries()) {
      const { accountId } = started[index];
      const what = `${crashCase.driver} killed after ${crashCase.step}`;
      const expectedCharges = crashCase.charged ? 1n : 0n;
      const totals = await until(
        () => reader.totals(accountId),
        (value) => value.openHolds === 0n && value.chargeCount === expectedCharges,
      );
      assert.equal(totals.openHolds, 0n, `${what}: no hold left open`);
      assert.equal(totals.chargeCount, expectedCharges, `${what}: ${crashCase.charged ? 'charged once' : 'not charged'}`);
      assertLedgerExact(totals, await shownBalance(survivor, accountId));
      const rows = await until(
        () => reader.rows(accountId),
        (count) => count >= crashCase.rows,
        5_000,
      );
      assert.equal(rows, crashCase.rows, `${what}: request log rows`);
      if (crashCase.driver === 'background' || crashCase.driver === 'video') {
        const [jobId] = await reader.jobIds(accountId);
        assert.ok(jobId, `${what}: the job exists`);
        const delivered = await until(
          async () => events.get(jobId)?.size ?? 0,
          (count) => count > 0,
        );
        assert.equal(delivered, 1, `${what}: one webhook event`);
      }
    }
  } finally {
    await survivor.process.stop('SIGTERM');
  }
}

describe('a metered call killed at each step boundary', { concurrency: 2 }, () => {
  test('SQLite', async () => {
    const dataDir = join(workDir, 'sqlite');
    const read = <T>(query: (file: DatabaseSync) => T): T => {
      const file = new DatabaseSync(join(dataDir, SQLITE_FILE_NAME), { readOnly: true });
      try {
        return query(file);
      } finally {
        file.close();
      }
    };
    await runCases(
      { GATEWAY_DATA_DIR: dataDir },
      {
        totals: async (accountId) =>
          read((file) => {
            const statement = file.prepare(LEDGER_TOTALS_SQL('?1'));
            statement.setReadBigInts(true);
            return ledgerTotals(statement.get(accountId)!);
          }),
        rows: async (accountId) =>
          read((file) => Number((file.prepare('SELECT count(*) AS n FROM request_log WHERE owner_id = ?').get(accountId) as { n: number }).n)),
        jobIds: async (accountId) =>
          read((file) => (file.prepare('SELECT id FROM jobs WHERE owner_id = ?').all(accountId) as { id: string }[]).map((row) => row.id)),
      },
    );
  });

  describe('PostgreSQL', () => {
    let database: ServerSchema;
    before(async () => {
      database = await serverSchema();
    });
    after(() => database.drop());

    test('PostgreSQL', async () => {
      const query = async (text: string, accountId: string) => (await database.admin.query(text, [accountId])).rows;
      await runCases(
        { DATABASE_URL: database.databaseUrl, GATEWAY_DATA_DIR: join(workDir, 'postgres') },
        {
          totals: async (accountId) => ledgerTotals((await query(LEDGER_TOTALS_SQL('$1'), accountId))[0]),
          rows: async (accountId) => Number((await query('SELECT count(*) AS n FROM request_log WHERE owner_id = $1', accountId))[0].n),
          jobIds: async (accountId) => (await query('SELECT id FROM jobs WHERE owner_id = $1', accountId)).map((row) => row.id as string),
        },
      );
    });
  });
});
