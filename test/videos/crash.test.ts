/**
 * Video jobs across process deaths and instances, as real server processes over the Veo simulator
 * (docs/video.md, "Restarts and failures"): a server is killed with kill -9 while a step of its job
 * holds the job's lease in the middle of a look at the operation (the look hanging upstream, so the
 * job cannot end before the kill); then the next server on the SQLite file, or a second instance on the same PostgreSQL
 * once the dead one's lease lapsed, resumes polling the same operation from the job's checkpoint.
 * Each ends with one upstream generation, one charge of the delivered seconds, nothing held, and
 * the ledger balanced to the last unit.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { dump } from 'js-yaml';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { usdToPicos } from '../../src/core/money.ts';
import {
  assertLedgerExact,
  fundedAccount,
  LEDGER_TOTALS_SQL,
  ledgerTotals,
  type LedgerTotals,
  type Server,
  type ServerSchema,
  serverSchema,
  settledLedger,
  shownBalance,
  sqliteLedgerTotals,
  startServer,
} from '../helpers/servers.ts';
import { startVeoSimulator, type VeoSimulator } from '../simulators/veo.ts';
import { endedVideo, submitVideo, videoEndpoint, videoModel } from './helpers.ts';

const VEO_KEY = 'veo-crash-key';
const LEASE_SECONDS = 2;

let workDir: string;
let configPath: string;
let veo: VeoSimulator;

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'gateway-video-crash-'));
  veo = await startVeoSimulator({ apiKey: VEO_KEY, runningPolls: 3 });
  const config: GatewayConfig = {
    providers: [{ id: 'veo', kind: 'gemini', base_url: veo.baseUrl, api_key_env: 'VEO_KEY', timeout_ms: 2_000 }],
    models: [
      videoModel('gateway/veo', [
        videoEndpoint('veo-3.0-generate', {
          provider: 'veo',
          pricing: { unit: 'per_second', per_second: 0.4 },
          limits: { supported_durations: [4, 6, 8] },
          video: { default_duration_seconds: 8 },
        }),
      ]),
    ],
    jobs: { lease_seconds: LEASE_SECONDS, poll_interval_ms: 100 },
    videos: { poll_interval_ms: 50, max_poll_interval_ms: 100 },
  };
  configPath = join(workDir, 'video.yaml');
  await writeFile(configPath, dump(config));
});
after(async () => {
  await veo.close();
  await rm(workDir, { recursive: true, force: true });
});

/**
 * Submits a job and returns once a step of it holds its lease in the middle of a look at the
 * operation (started, its checkpoint written, the look hanging upstream): a kill now leaves the job
 * under a lease that lapses (or that the next server on the SQLite file clears) before anyone goes on.
 */
async function submitMidLook(server: Server, key: string, prompt: string): Promise<string> {
  const startedBefore = veo.started.length;
  // The start is answered; the look that follows it at once hangs.
  veo.enqueue({ kind: 'normal' }, { kind: 'delay', ms: 30_000 });
  const submitted = await submitVideo({ baseUrl: server.baseUrl, apiKey: key }, { model: 'gateway/veo', prompt, duration: 4 });
  assert.equal(submitted.status, 200, submitted.text);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const operation = veo.started[startedBefore]?.id;
    if (operation && veo.requests.some((request) => request.method === 'GET' && request.path.endsWith(operation))) break;
    if (Date.now() > deadline) assert.fail('the job never looked at its operation');
    await sleep(10);
  }
  return submitted.body.id;
}

function assertOneCharge(totals: LedgerTotals, shown: Awaited<ReturnType<typeof shownBalance>>): void {
  assert.equal(totals.chargeCount, 1n, 'one charge');
  assert.equal(totals.charges, usdToPicos('1.6'), '4 seconds at 0.4');
  assert.equal(totals.openHolds, 0n, 'no hold left open');
  assertLedgerExact(totals, shown);
}

describe('video jobs across crashes and instances', () => {
  test('SQLite: after a kill -9 mid-operation, the next server resumes polling it: one generation, one charge', async () => {
    const dataDir = join(workDir, 'sqlite');
    const env = { GATEWAY_DATA_DIR: dataDir, VEO_KEY };
    const first = await startServer(configPath, env);
    const startedBefore = veo.started.length;
    let funded: { accountId: string; key: string };
    let jobId: string;
    try {
      funded = await fundedAccount(first, 'video');
      jobId = await submitMidLook(first, funded.key, 'a crash-proof sunset');
    } finally {
      await first.process.stop('SIGKILL');
    }
    const second = await startServer(configPath, env);
    try {
      const job = (await endedVideo({ baseUrl: second.baseUrl, apiKey: funded.key }, jobId)).body;
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(veo.started.length, startedBefore + 1, 'one generation, never a second');
      assert.match(second.process.output(), /resuming it from its checkpoint/);
      const totals = await settledLedger(() => sqliteLedgerTotals(dataDir, funded.accountId));
      assertOneCharge(totals, await shownBalance(second, funded.accountId));
    } finally {
      assert.equal((await second.process.stop('SIGTERM')).code, 0);
    }
  });

  describe('PostgreSQL', () => {
    let database: ServerSchema;
    let env: Record<string, string>;
    before(async () => {
      database = await serverSchema();
      env = { DATABASE_URL: database.databaseUrl, GATEWAY_DATA_DIR: join(workDir, 'postgres'), VEO_KEY };
    });
    after(() => database.drop());

    test(`a second instance resumes the operation of one killed with kill -9 once its lease lapsed (${LEASE_SECONDS} s here)`, async () => {
      const doomed = await startServer(configPath, env);
      let survivor: Server | undefined;
      const startedBefore = veo.started.length;
      try {
        const funded = await fundedAccount(doomed, 'video');
        const jobId = await submitMidLook(doomed, funded.key, 'a crash-proof moonrise');
        await doomed.process.stop('SIGKILL');
        survivor = await startServer(configPath, env);
        const job = (await endedVideo({ baseUrl: survivor.baseUrl, apiKey: funded.key }, jobId)).body;
        assert.equal(job.status, 'completed', JSON.stringify(job));
        assert.equal(veo.started.length, startedBefore + 1, 'one generation, never a second');
        assert.match(survivor.process.output(), /resuming it from its checkpoint/);
        const totals = await settledLedger(async () => ledgerTotals((await database.admin.query(LEDGER_TOTALS_SQL('$1'), [funded.accountId])).rows[0]));
        assertOneCharge(totals, await shownBalance(survivor, funded.accountId));
      } finally {
        await doomed.process.stop('SIGKILL');
        await survivor?.process.stop('SIGTERM');
      }
    });
  });
});
