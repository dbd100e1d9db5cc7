/**
 * What a job claim costs behind a backlog (docs/jobs.md, "Scheduling"): a store with `--queued`
 * background responses spread over `--owners` owners, then `--claims` claims one after another, each
 * followed by the job's end, as one runner slot does them. Printed per store and owner count: the
 * wall time per claim and end, the gateway process's CPU (on SQLite the statements run on its event
 * loop) and, on PostgreSQL, the database backend's CPU.
 *
 * `node bench/claims.ts [--queued=4000] [--owners=1,50] [--claims=300] [--database=URL|none]`
 * (PostgreSQL: BENCH_DATABASE_URL, default the local test database, in a schema of its own dropped
 * at the end; `none` runs SQLite alone).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openStore } from '../src/storage/open-store.ts';
import type { Store } from '../src/storage/store.ts';
import { backendCpu } from './postgres-cpu.ts';
import { DEFAULT_BENCH_DATABASE_URL } from './scale-out.ts';

const { values } = parseArgs({
  options: {
    queued: { type: 'string', default: '4000' },
    owners: { type: 'string', default: '1,50' },
    claims: { type: 'string', default: '300' },
    database: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? DEFAULT_BENCH_DATABASE_URL },
  },
});
const queued = Number(values.queued);
const claims = Number(values.claims);
const FAR = 9e12;

async function fill(store: Store, owners: number): Promise<void> {
  for (let index = 0; index < queued; index++) {
    await store.createJob({
      id: `job_${index}`,
      kind: 'response',
      owner: { kind: 'account', id: `acct_${index % owners}` },
      keyId: 'key_bench',
      status: 'queued',
      payload: null,
      result: null,
      reservationId: null,
      createdAt: 1_000 + index,
      expiresAt: FAR,
    });
  }
}

/** Claims and ends `claims` jobs one after another; wall and gateway CPU in µs per claim. */
async function claimAll(store: Store): Promise<{ wallMicros: number; cpuMicros: number }> {
  const startedAt = performance.now();
  const cpuBefore = process.cpuUsage();
  for (let index = 0; index < claims; index++) {
    const now = 1_000 + queued + index;
    const job = await store.claimJob('response', 'worker_bench', now, FAR);
    if (job === null) throw new Error(`claim ${index + 1} found nothing with jobs queued`);
    await store.transitionJob(job.id, ['in_progress'], { status: 'completed', leaseUntil: null, now }, 'worker_bench');
  }
  const cpu = process.cpuUsage(cpuBefore);
  return { wallMicros: ((performance.now() - startedAt) * 1_000) / claims, cpuMicros: (cpu.user + cpu.system) / claims };
}

const line = (store: string, owners: number, figures: { wallMicros: number; cpuMicros: number }, databaseMicros?: number) =>
  console.log(
    `${store}, ${queued} queued over ${owners} owner(s): ${(figures.wallMicros / 1_000).toFixed(2)} ms per claim and end, gateway CPU ${(figures.cpuMicros / 1_000).toFixed(2)} ms` +
      (databaseMicros === undefined ? '' : `, PostgreSQL CPU ${(databaseMicros / 1_000).toFixed(2)} ms`),
  );

for (const owners of values.owners.split(',').map(Number)) {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-claims-'));
  const store = await openStore({ dataDir });
  try {
    await fill(store, owners);
    line('SQLite', owners, await claimAll(store));
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (values.database === 'none') continue;
  const schema = `bench_claims_${randomBytes(6).toString('hex')}`;
  const applicationName = `gateway_${schema}`;
  const admin = new pg.Client({ connectionString: values.database });
  await admin.connect();
  try {
    const address = new URL(values.database);
    address.searchParams.set('application_name', applicationName);
    const postgres = await openStore({ databaseUrl: address.href, dataDir: tmpdir(), schema });
    try {
      await fill(postgres, owners);
      // What autovacuum would have done by now: the planner sees the backlog as it is.
      await admin.query(`ANALYZE ${schema}.jobs`);
      const cpuBefore = await backendCpu(admin, applicationName);
      const figures = await claimAll(postgres);
      line('PostgreSQL', owners, figures, (((await backendCpu(admin, applicationName)) - cpuBefore) * 1e6) / claims);
    } finally {
      await postgres.close();
    }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}
