/**
 * The graceful drain of a real server process (docs/operations.md, "Graceful drain"), on SQLite and
 * on PostgreSQL: SIGTERM while a stream, a background response and a video job are running. Health
 * turns to `draining`; the stream that outlasts the deadline ends with an in-stream error and is
 * charged for what it delivered; the background response ends; the video job is handed back and the
 * next server completes it; the process exits 0. Then: a usage row for every request, no hold left
 * open, no job left running.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dump } from 'js-yaml';
import { DEMO_CONFIG_PATH, loadConfigFile } from '../../src/config/load.ts';
import { call } from '../helpers/http.ts';
import { untilEnded } from '../helpers/jobs.ts';
import {
  assertLedgerExact,
  fundedAccount,
  LEDGER_TOTALS_SQL,
  type LedgerTotals,
  ledgerTotals,
  type Server,
  serverSchema,
  shownBalance,
  sqliteLedgerTotals,
  startServer,
} from '../helpers/servers.ts';

/**
 * The stream lasts most of a minute (however slowly the servers start); the drain deadline cuts it,
 * long enough after SIGTERM for the test to see the draining health and refusal on a busy machine.
 */
const DRAIN_TIMEOUT_MS = 8_000;

let workDir: string;
let configPath: string;

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'gateway-drain-'));
  const demo = loadConfigFile(DEMO_CONFIG_PATH);
  const config = {
    ...demo,
    // Slow deltas (a stream of several seconds), a video ready a few seconds after its start, and
    // the deep-research provider slower than the deadline.
    providers: demo.providers.map((provider) =>
      provider.id === 'sim-deliberate'
        ? { ...provider, simulated: { latency_ms: 20_000 } }
        : { ...provider, simulated: { chunk_delay_ms: 5_000, video_delay_ms: 3_000 } },
    ),
    jobs: { poll_interval_ms: 50, lease_seconds: 30 },
    videos: { poll_interval_ms: 100, max_poll_interval_ms: 200 },
  };
  configPath = join(workDir, 'drain.yaml');
  await writeFile(configPath, dump(config));
});
after(() => rm(workDir, { recursive: true, force: true }));

const STREAM_PROMPT = 'Tell a long story about a lighthouse keeper who counts ships, storms, gulls and stars every night of the year.';

interface Running {
  readonly stream: Promise<string>;
  readonly responseId: string;
  readonly videoId: string;
}

/** Starts a slow stream, a background response and a video job; resolves once all three are under way. */
async function startWork(server: Server, key: string): Promise<Running> {
  const response = await fetch(`${server.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gateway/atlas-4-5', stream: true, messages: [{ role: 'user', content: STREAM_PROMPT }] }),
  });
  assert.equal(response.status, 200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let received = decoder.decode((await reader.read()).value);
  const stream = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return received;
      received += decoder.decode(value);
    }
  })();
  const background = await call(server.baseUrl, 'POST', '/v1/responses', {
    key,
    json: { model: 'gateway/lumen-3-deep-research', input: 'Research drains.', background: true },
  });
  assert.equal(background.status, 200, background.text);
  const video = await call(server.baseUrl, 'POST', '/v1/videos/generations', {
    key,
    json: { model: 'gateway/reel-3-lite', prompt: 'a lighthouse', duration: 5 },
  });
  assert.equal(video.status, 200, video.text);
  // Both jobs are under way: the response running on this instance, the video's operation started
  // (a step of it running, or the job parked until its next look).
  await untilEnded(
    async () => {
      const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
      const both =
        /gateway_jobs_running\{kind="response"\} 1/.test(metrics) &&
        (/gateway_jobs_running\{kind="video"\} 1/.test(metrics) || /gateway_jobs_parked\{kind="video"\} 1/.test(metrics));
      return { status: both ? 'running' : 'waiting' };
    },
    ['waiting'],
    'both jobs claimed',
    { intervalMs: 50 },
  );
  return { stream, responseId: background.body.id, videoId: video.body.id };
}

/** SIGTERM: health says draining at once; the process exits 0 once the drain is over. */
async function drain(server: Server): Promise<void> {
  server.process.child.kill('SIGTERM');
  await server.process.waitFor(/gateway draining/);
  const health = await fetch(`${server.baseUrl}/healthz`);
  assert.equal(health.status, 503);
  assert.equal(((await health.json()) as { status: string }).status, 'draining');
  const refused = await call(server.baseUrl, 'GET', '/v1/models');
  assert.equal(refused.status, 503, 'no new request is accepted');
  const exited = await server.process.exited;
  assert.equal(exited.code, 0, exited.stderr);
}

/** After the next server finished the handed-back video: every request ended, every hold closed. */
async function assertSettled(
  drained: Server,
  server: Server,
  key: string,
  accountId: string,
  running: Running,
  totals: () => Promise<LedgerTotals>,
): Promise<void> {
  const received = await running.stream.catch((error: unknown) => {
    // What the drained server logged at warning level and above says why (a cut stream not ended at the backstop, …).
    const warnings = drained.process
      .output()
      .split('\n')
      .filter((line) => /"level":[4-6]0/.test(line));
    throw new Error(`the stream failed (${String(error)}); the drained server's warnings:\n${warnings.join('\n')}`, { cause: error });
  });
  assert.doesNotMatch(received, /data: \[DONE\]/, 'the stream did not finish');
  assert.match(received, /"error":\{"message":"The server is shutting down; retry the request\."/, 'it ended with an in-stream error');

  const response = (await call(server.baseUrl, 'GET', `/v1/responses/${running.responseId}`, { key })).body;
  assert.ok(['failed', 'completed'].includes(response.status), `the background response ended (${response.status})`);
  const video = await untilEnded(
    async () => (await call(server.baseUrl, 'GET', `/v1/videos/generations/${running.videoId}`, { key })).body as { status: string },
    ['queued', 'processing'],
    'the handed-back video job',
    { intervalMs: 100 },
  );
  assert.equal(video.status, 'completed', 'the next server resumed and completed the video job');

  const usage = (await call(server.baseUrl, 'GET', `/admin/v1/usage?account_id=${accountId}`, { key: 'admin-secret-for-tests' })).body;
  const streamRow = usage.data.find((row: { model: string }) => row.model === 'gateway/atlas-4-5');
  assert.ok(streamRow && streamRow.requests === 1 && Number(streamRow.cost_usd) > 0, 'the cut stream has its usage row, charged for what it delivered');
  const ledger = await totals();
  assert.equal(ledger.openHolds, 0n, 'no hold left open');
  assertLedgerExact(ledger, await shownBalance(server, accountId));
}

describe('graceful drain', () => {
  test('SQLite', { timeout: 300_000 }, async () => {
    const dataDir = join(workDir, 'sqlite');
    const env = { GATEWAY_DATA_DIR: dataDir, GATEWAY_DRAIN_TIMEOUT_MS: String(DRAIN_TIMEOUT_MS) };
    const first = await startServer(configPath, env);
    let funded: { accountId: string; key: string };
    let running: Running;
    try {
      funded = await fundedAccount(first, 'drain');
      running = await startWork(first, funded.key);
      await drain(first);
    } finally {
      await first.process.stop('SIGKILL');
    }
    const next = await startServer(configPath, env);
    try {
      await assertSettled(first, next, funded.key, funded.accountId, running, async () => sqliteLedgerTotals(dataDir, funded.accountId));
    } finally {
      await next.process.stop();
    }
  });

  test('PostgreSQL: the other instance resumes the handed-back job at once', { timeout: 300_000 }, async () => {
    const database = await serverSchema();
    const env = { DATABASE_URL: database.databaseUrl, GATEWAY_DATA_DIR: join(workDir, 'pg'), GATEWAY_DRAIN_TIMEOUT_MS: String(DRAIN_TIMEOUT_MS) };
    let first: Server | undefined;
    let other: Server | undefined;
    try {
      first = await startServer(configPath, env);
      const funded = await fundedAccount(first, 'drain');
      const running = await startWork(first, funded.key);
      other = await startServer(configPath, env);
      await drain(first);
      await assertSettled(first, other, funded.key, funded.accountId, running, async () =>
        ledgerTotals((await database.admin.query(LEDGER_TOTALS_SQL('$1'), [funded.accountId])).rows[0]),
      );
    } finally {
      await first?.process.stop('SIGKILL');
      await other?.process.stop();
      await database.drop();
    }
  });
});
