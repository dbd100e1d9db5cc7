/**
 * Background responses across process deaths and instances, as real server processes over an
 * OpenAI-protocol simulator (docs/jobs.md):
 * - SQLite: a server killed with kill -9 while one job's upstream call is in flight and another job
 *   waits; the next server on the file fails the first (it was sent upstream: never sent twice) and
 *   releases its hold, and runs the second to completion.
 * - PostgreSQL: the same with a second instance taking over once the dead one's lease lapsed; and a
 *   cancel made on one instance aborting the upstream call of a job running on the other.
 * Every job ends in a terminal state and the ledger balances to the last unit: credits − charges =
 * balance, reserved = open holds, and the only charge is the completed job's cost.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { dump } from 'js-yaml';
import { usdToPicos } from '../../src/core/money.ts';
import { call } from '../helpers/http.ts';
import { RESPONSE_RUNNING, untilEnded } from '../helpers/jobs.ts';
import {
  assertLedgerExact,
  fundedAccount,
  LEDGER_TOTALS_SQL,
  type LedgerTotals,
  ledgerTotals,
  type Server,
  type ServerSchema,
  serverSchema,
  settledLedger,
  type ShownBalance,
  shownBalance,
  sqliteLedgerTotals,
  startServer,
} from '../helpers/servers.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import { startOpenAIChatSimulator, type OpenAIChatSimulator } from '../simulators/openai-chat.ts';

const MODEL = 'gateway/jobs-model';
const UPSTREAM_KEY = 'sk-jobs';
/**
 * jobs.lease_seconds: a dead instance's jobs are taken over this long after its last heartbeat; long
 * enough that a live instance starved of CPU on a busy machine keeps its own.
 */
const LEASE_SECONDS = 6;
/** An upstream call that only a kill or a cancel ends within the test. */
const HELD_CALL = { kind: 'delay', ms: 60_000 } as const;

let workDir: string;
let configPath: string;
let upstream: OpenAIChatSimulator;

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'gateway-jobs-crash-'));
  upstream = await startOpenAIChatSimulator({ apiKey: UPSTREAM_KEY });
  const config = {
    ...chatModelsConfig({ [MODEL]: [{ id: 'upstream', kind: 'openai', baseUrl: upstream.baseUrl, apiKeyEnv: 'UPSTREAM_KEY', timeoutMs: 120_000 }] }),
    // One job at a time per instance, so that a second job waits in the queue behind a held one.
    jobs: { concurrency: 1, lease_seconds: LEASE_SECONDS, poll_interval_ms: 100 },
    billing: { instance_lapse_seconds: 3 },
  };
  configPath = join(workDir, 'jobs.yaml');
  await writeFile(configPath, dump(config));
});
after(async () => {
  await upstream.close();
  await rm(workDir, { recursive: true, force: true });
});
beforeEach(() => upstream.setDefault({ kind: 'normal' }));

async function submit(server: Server, key: string, input: string): Promise<string> {
  const queued = await call(server.baseUrl, 'POST', '/v1/responses', { key, json: { model: MODEL, input, background: true } });
  assert.equal(queued.status, 200, queued.text);
  assert.equal(queued.body.status, 'queued');
  return queued.body.id;
}

const retrieve = async (server: Server, key: string, id: string) => (await call(server.baseUrl, 'GET', `/v1/responses/${id}`, { key })).body;

/** Polls until the response has ended (bounded). */
function ended(server: Server, key: string, id: string): Promise<Record<string, any>> {
  return untilEnded(() => retrieve(server, key, id), RESPONSE_RUNNING, `response ${id}`, { intervalMs: 50, timeoutMs: 60_000 });
}

async function upstreamSaw(count: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (upstream.requests.length < count) {
    if (Date.now() > deadline) assert.fail(`the upstream saw ${upstream.requests.length} of ${count} calls`);
    await sleep(10);
  }
}

/** One charge, equal to the completed job's cost; nothing held; the identities hold on the rows and in the admin view. */
function assertBalanced(totals: LedgerTotals, shown: ShownBalance, completedCost: string): void {
  assert.equal(totals.chargeCount, 1n, 'one charge: the completed job, never the failed one, never twice');
  assert.equal(totals.charges, usdToPicos(completedCost), 'the charge is the cost the completed response shows');
  assert.equal(totals.openHolds, 0n, 'no hold left open');
  assertLedgerExact(totals, shown);
}

/** The two jobs of a crash: the first held upstream when the instance dies, the second waiting behind it. */
function assertCrashOutcome(interrupted: Record<string, any>, waiting: Record<string, any>): void {
  assert.equal(interrupted.status, 'failed');
  assert.equal(interrupted.error.code, 'server_error');
  assert.match(interrupted.error.message, /stopped after sending it upstream/);
  assert.equal(waiting.status, 'completed');
  assert.ok(waiting.output[0].content[0].text.includes('second job'));
}

describe('background jobs across crashes and instances', () => {
  test('SQLite: after a kill -9, the next server fails the job that was upstream (no charge) and completes the one that waited', async () => {
    const dataDir = join(workDir, 'sqlite');
    const first = await startServer(configPath, { GATEWAY_DATA_DIR: dataDir, UPSTREAM_KEY });
    let funded: { accountId: string; key: string };
    let interruptedId: string;
    let waitingId: string;
    const seen = upstream.requests.length;
    try {
      funded = await fundedAccount(first, 'jobs');
      upstream.enqueue(HELD_CALL);
      interruptedId = await submit(first, funded.key, 'first job');
      await upstreamSaw(seen + 1);
      waitingId = await submit(first, funded.key, 'second job');
      assert.equal((await retrieve(first, funded.key, waitingId)).status, 'queued');
      assert.ok((await shownBalance(first, funded.accountId)).reserved > 0n, 'both jobs hold credit');
    } finally {
      await first.process.stop('SIGKILL');
    }

    const second = await startServer(configPath, { GATEWAY_DATA_DIR: dataDir, UPSTREAM_KEY });
    try {
      const interrupted = await ended(second, funded.key, interruptedId);
      const waiting = await ended(second, funded.key, waitingId);
      assertCrashOutcome(interrupted, waiting);
      assert.equal(upstream.requests.length, seen + 2, 'the interrupted job was not sent again');
      assert.match(second.process.output(), /released the job leases of the previous server/);
      const totals = await settledLedger(() => sqliteLedgerTotals(dataDir, funded.accountId));
      assertBalanced(totals, await shownBalance(second, funded.accountId), waiting.usage.cost);
    } finally {
      assert.equal((await second.process.stop('SIGTERM')).code, 0);
    }
  });

  describe('PostgreSQL', () => {
    let database: ServerSchema;
    let env: Record<string, string>;
    before(async () => {
      database = await serverSchema();
      env = { DATABASE_URL: database.databaseUrl, GATEWAY_DATA_DIR: join(workDir, 'postgres'), UPSTREAM_KEY };
    });
    after(() => database.drop());

    test(`a second instance takes over the jobs of one killed with kill -9 once its lease lapsed (${LEASE_SECONDS} s here)`, async () => {
      const doomed = await startServer(configPath, env);
      let survivor: Server | undefined;
      const seen = upstream.requests.length;
      try {
        const funded = await fundedAccount(doomed, 'jobs');
        upstream.enqueue(HELD_CALL);
        const interruptedId = await submit(doomed, funded.key, 'first job');
        await upstreamSaw(seen + 1);
        const waitingId = await submit(doomed, funded.key, 'second job');
        await doomed.process.stop('SIGKILL');
        survivor = await startServer(configPath, env);
        const interrupted = await ended(survivor, funded.key, interruptedId);
        const waiting = await ended(survivor, funded.key, waitingId);
        assertCrashOutcome(interrupted, waiting);
        assert.equal(upstream.requests.length, seen + 2, 'the interrupted job was not sent again');
        const totals = await settledLedger(async () => ledgerTotals((await database.admin.query(LEDGER_TOTALS_SQL('$1'), [funded.accountId])).rows[0]));
        assertBalanced(totals, await shownBalance(survivor, funded.accountId), waiting.usage.cost);
      } finally {
        await doomed.process.stop('SIGKILL');
        await survivor?.process.stop('SIGTERM');
      }
    });

    test('a cancel on one instance aborts the upstream call of the job another instance runs, and refunds its hold', async () => {
      const runner = await startServer(configPath, env);
      let other: Server | undefined;
      const seen = upstream.requests.length;
      try {
        const funded = await fundedAccount(runner, 'jobs');
        upstream.enqueue(HELD_CALL);
        const id = await submit(runner, funded.key, 'cancel me elsewhere');
        await upstreamSaw(seen + 1);
        other = await startServer(configPath, env);
        const cancelled = await call(other.baseUrl, 'POST', `/v1/responses/${id}/cancel`, { key: funded.key });
        assert.equal(cancelled.status, 200, cancelled.text);
        assert.equal(cancelled.body.status, 'cancelled');
        const deadline = Date.now() + 30_000;
        while (!upstream.abandoned.includes(upstream.requests[seen])) {
          if (Date.now() > deadline) assert.fail('the upstream call of the cancelled job was not aborted');
          await sleep(10);
        }
        assert.equal((await retrieve(runner, funded.key, id)).status, 'cancelled');
        const totals = ledgerTotals((await database.admin.query(LEDGER_TOTALS_SQL('$1'), [funded.accountId])).rows[0]);
        assert.equal(totals.chargeCount, 0n);
        assert.equal(totals.openHolds, 0n);
        assert.equal(totals.balance, totals.credits);
        const again = await call(runner.baseUrl, 'POST', `/v1/responses/${id}/cancel`, { key: funded.key });
        assert.equal(again.status, 409);
        assert.equal(again.body.error.code, 'invalid_state');
      } finally {
        await runner.process.stop('SIGTERM');
        await other?.process.stop('SIGTERM');
      }
    });
  });
});
