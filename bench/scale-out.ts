/**
 * One busy account on PostgreSQL against the embedded store (docs/performance.md, "One busy account
 * on PostgreSQL"): the chat and chat-stream workloads at 50 connections, all on one account's key,
 * measured in alternating rounds on three set-ups started side by side — the embedded store, one
 * instance on PostgreSQL (and Redis, when one answers), and two instances on the same PostgreSQL
 * database sharing the account (25 connections each). During the PostgreSQL rounds the database's
 * backends serving the gateways are sampled in pg_stat_activity (how many states are lock waits)
 * and their CPU is read from /proc; after each workload the ledger of every store is checked
 * exact. `npm run bench` runs it (`scale` in `--only`); on its own:
 * `node bench/scale-out.ts [--rounds=3] [--seconds=5] [--database=URL] [--redis=URL|none]`.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startGateway, type RunningGateway } from './gateway.ts';
import { runClosedLoop, type ClosedLoopResult } from './load.ts';
import { cpuSeconds, type ProcessGroup, startStandaloneSimulator } from './processes.ts';
import { SQLITE_FILE_NAME } from '../src/storage/open-store.ts';
import { WORKLOADS, type Workload } from './workloads.ts';

/** Where the PostgreSQL set-ups run unless told otherwise (a schema of their own, dropped at the end). */
export const DEFAULT_BENCH_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
const SCALE_WORKLOADS = ['chat', 'chat-stream'] as const;
const CONNECTIONS = 50;

export type SetupName = 'embedded' | 'postgres' | 'postgres-2';

/** What pg_stat_activity showed of the gateways' backends, sampled every SAMPLE_MS. */
export interface BackendSamples {
  /** Backend states sampled (one per backend per sample), idle ones included. */
  readonly states: number;
  /** Of those, the ones running a statement or waiting for one to be able to run. */
  readonly active: number;
  /** Of those, the ones waiting for a lock (`wait_event_type` Lock). */
  readonly lockWaits: number;
  /** Waits on the WAL being flushed (`wait_event` WALWrite or WALSync…: commits). */
  readonly walWaits: number;
}

export interface SetupRound {
  readonly requestsPerSecond: number;
  readonly failed: number;
  /** PostgreSQL backends' CPU per answered request, µs (PostgreSQL set-ups). */
  readonly databaseMicrosPerRequest: number | null;
  /** The gateway processes' CPU per answered request, µs. */
  readonly gatewayMicrosPerRequest: number | null;
  readonly backends: BackendSamples | null;
}

export interface ScaleWorkloadResult {
  readonly id: string;
  readonly rounds: readonly Readonly<Record<SetupName, SetupRound>>[];
  /** Medians over the rounds. */
  readonly median: Readonly<Record<SetupName, { readonly requestsPerSecond: number; readonly databaseMicrosPerRequest: number | null }>>;
  /** PostgreSQL (one instance) over the embedded store, and two instances over one, from the medians. */
  readonly postgresOverEmbedded: number;
  readonly twoOverOne: number;
  /** Lock waits over every sampled backend state, all PostgreSQL rounds together. */
  readonly lockWaitShare: number;
  /** Lock waits over the active backend states. */
  readonly lockWaitShareOfActive: number;
  /** Whether each store's ledger was exact after the workload (credits − charges = balance, nothing held). */
  readonly ledgerExact: Readonly<Record<'embedded' | 'postgres', string | true>>;
}

export interface ScaleOutResult {
  readonly counters: 'redis' | 'memory';
  readonly rounds: number;
  readonly seconds: number;
  /** One-minute load average before and after: the machine is shared, so the ratios are what to read. */
  readonly loadAverage: readonly [number, number];
  readonly workloads: readonly ScaleWorkloadResult[];
}

export interface ScaleOutOptions {
  readonly repoRoot: string;
  readonly upstreamOrigin: string;
  readonly redisUrl: string | undefined;
  readonly databaseUrl: string;
  readonly rounds: number;
  readonly seconds: number;
  readonly timeoutMs: number;
}

const SAMPLE_MS = 50;

/** Starts the three set-ups, measures every workload, checks the ledgers, stops what it started. */
export async function measureScaleOut(
  group: ProcessGroup,
  options: ScaleOutOptions,
  loadAverage: () => number,
  log: (line: string) => void,
): Promise<ScaleOutResult> {
  const loadBefore = loadAverage();
  const schema = `bench_scale_${randomBytes(6).toString('hex')}`;
  // The gateways' connections carry a name of their own, so that sampling sees only them.
  const applicationName = `gateway_${schema}`;
  const admin = new pg.Client({ connectionString: options.databaseUrl });
  await admin.connect();
  const started: RunningGateway[] = [];
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.query(`SET search_path TO ${schema}`);
    const url = new URL(options.databaseUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    url.searchParams.set('application_name', applicationName);
    const start = async (databaseUrl?: string, account?: RunningGateway) => {
      const gateway = await startGateway(group, {
        repoRoot: options.repoRoot,
        upstreamOrigin: options.upstreamOrigin,
        firstGapMs: 10,
        holdMs: 400,
        cpuProfileDir: undefined,
        dataRoot: undefined,
        timeoutMs: options.timeoutMs,
        redisUrl: options.redisUrl,
        databaseUrl,
        account,
      });
      started.push(gateway);
      return gateway;
    };
    const embedded = await start();
    const first = await start(url.href);
    const second = await start(url.href, first);
    const setups: Record<SetupName, readonly RunningGateway[]> = { embedded: [embedded], postgres: [first], 'postgres-2': [first, second] };
    const workloads: ScaleWorkloadResult[] = [];
    for (const id of SCALE_WORKLOADS) {
      const workload = WORKLOADS.find((candidate) => candidate.id === id)!;
      workloads.push(await measureWorkload(workload, setups, { ...options, admin, applicationName }, log));
    }
    return {
      counters: options.redisUrl ? 'redis' : 'memory',
      rounds: options.rounds,
      seconds: options.seconds,
      loadAverage: [loadBefore, loadAverage()],
      workloads,
    };
  } finally {
    for (const gateway of started) await group.stop(gateway.child);
    for (const gateway of started) gateway.cleanup();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

async function measureWorkload(
  workload: Workload,
  setups: Readonly<Record<SetupName, readonly RunningGateway[]>>,
  options: ScaleOutOptions & { readonly admin: pg.Client; readonly applicationName: string },
  log: (line: string) => void,
): Promise<ScaleWorkloadResult> {
  const names = Object.keys(setups) as SetupName[];
  const run = (name: SetupName, seconds: number) => runSetup(setups[name], workload, seconds, name === 'embedded' ? null : options);
  // A gateway just started costs more per request over its first seconds of load.
  for (const name of names) await run(name, 2);
  const rounds: Record<SetupName, SetupRound>[] = [];
  for (let round = 0; round < options.rounds; round++) {
    // The order turns each round, so that a drift of the shared machine weighs on all alike.
    const order = names.map((_, index) => names[(index + round) % names.length]);
    const measured = {} as Record<SetupName, SetupRound>;
    for (const name of order) measured[name] = await run(name, options.seconds);
    rounds.push(measured);
    const figures = (name: SetupName) => {
      const { requestsPerSecond, gatewayMicrosPerRequest, databaseMicrosPerRequest } = measured[name];
      const database = databaseMicrosPerRequest === null ? '' : ` + PostgreSQL ${Math.round(databaseMicrosPerRequest)}`;
      return `${name} ${Math.round(requestsPerSecond)} req/s (CPU µs per request: gateway ${Math.round(gatewayMicrosPerRequest ?? Number.NaN)}${database})`;
    };
    log(`scale-out · ${workload.id} round ${round + 1}: ${names.map(figures).join(', ')}`);
  }
  const median = Object.fromEntries(
    names.map((name) => [
      name,
      {
        requestsPerSecond: middle(rounds.map((round) => round[name].requestsPerSecond)),
        databaseMicrosPerRequest: name === 'embedded' ? null : middle(rounds.map((round) => round[name].databaseMicrosPerRequest ?? Number.NaN)),
      },
    ]),
  ) as ScaleWorkloadResult['median'];
  const samples = rounds.flatMap((round) => [round.postgres.backends, round['postgres-2'].backends]).filter((sample) => sample !== null);
  const states = samples.reduce((total, sample) => total + sample.states, 0);
  const active = samples.reduce((total, sample) => total + sample.active, 0);
  const lockWaits = samples.reduce((total, sample) => total + sample.lockWaits, 0);
  // Whatever was still settling when the load stopped has ended a moment later.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const ledgerExact = {
    embedded: checkEmbeddedLedger(setups.embedded[0]),
    postgres: await checkPostgresLedger(options.admin, setups.postgres[0].accountId),
  };
  return {
    id: workload.id,
    rounds,
    median,
    postgresOverEmbedded: median.postgres.requestsPerSecond / median.embedded.requestsPerSecond,
    twoOverOne: median['postgres-2'].requestsPerSecond / median.postgres.requestsPerSecond,
    lockWaitShare: states === 0 ? 0 : lockWaits / states,
    lockWaitShareOfActive: active === 0 ? 0 : lockWaits / active,
    ledgerExact,
  };
}

/** One saturation run of a set-up: its connections split over its instances, all at once. */
async function runSetup(
  gateways: readonly RunningGateway[],
  workload: Workload,
  seconds: number,
  database: { readonly admin: pg.Client; readonly applicationName: string } | null,
): Promise<SetupRound> {
  const sampler = database ? new BackendSampler(database.admin, database.applicationName) : null;
  await sampler?.start();
  const gatewayCpu = () => gateways.reduce((total, gateway) => total + cpuOf(gateway.child.pid), 0);
  const gatewayBefore = gatewayCpu();
  const results: ClosedLoopResult[] = await Promise.all(
    gateways.map((gateway) =>
      runClosedLoop(
        { origin: gateway.origin, request: workload.gateway(gateway.apiKey) },
        { connections: CONNECTIONS / gateways.length, durationSeconds: seconds, timeoutMs: seconds * 1000 + 15_000 },
      ),
    ),
  );
  const gatewayUsed = gatewayCpu() - gatewayBefore;
  const backends = await sampler?.stop();
  const completed = results.reduce((total, result) => total + result.completedInRun, 0);
  return {
    requestsPerSecond: results.reduce((total, result) => total + result.requestsPerSecond, 0),
    failed: results.reduce((total, result) => total + result.non2xx + result.errors, 0),
    databaseMicrosPerRequest: backends && completed > 0 ? (backends.cpuSeconds * 1e6) / completed : null,
    gatewayMicrosPerRequest: completed > 0 ? (gatewayUsed * 1e6) / completed : null,
    backends: backends?.samples ?? null,
  };
}

function cpuOf(pid: number): number {
  const cpu = cpuSeconds(pid);
  return cpu ? cpu.user + cpu.system : 0;
}

/**
 * Samples the states of the gateways' backends every SAMPLE_MS, and sums their CPU (from /proc, on
 * the same machine) between start and stop; a backend the pool opened meanwhile counts from zero,
 * one it closed up to its last sample.
 */
class BackendSampler {
  readonly #admin: pg.Client;
  readonly #applicationName: string;
  readonly #cpuAtStart = new Map<number, number>();
  /** Each backend's CPU when last read: a backend the pool closes meanwhile keeps what it used. */
  readonly #cpuLastSeen = new Map<number, number>();
  #samples: { states: number; active: number; lockWaits: number; walWaits: number } = { states: 0, active: 0, lockWaits: 0, walWaits: 0 };
  #timer: NodeJS.Timeout | undefined;
  #sampling: Promise<void> | null = null;

  constructor(admin: pg.Client, applicationName: string) {
    this.#admin = admin;
    this.#applicationName = applicationName;
  }

  async start(): Promise<void> {
    for (const { pid } of await this.#backends()) this.#cpuAtStart.set(pid, cpuOf(pid));
    this.#timer = setInterval(() => {
      this.#sampling ??= this.#sample().finally(() => (this.#sampling = null));
    }, SAMPLE_MS);
  }

  async stop(): Promise<{ readonly samples: BackendSamples; readonly cpuSeconds: number }> {
    clearInterval(this.#timer);
    await this.#sampling;
    for (const { pid } of await this.#backends()) this.#cpuLastSeen.set(pid, cpuOf(pid));
    let used = 0;
    for (const [pid, cpu] of this.#cpuLastSeen) used += cpu - (this.#cpuAtStart.get(pid) ?? 0);
    return { samples: { ...this.#samples }, cpuSeconds: used };
  }

  async #backends(): Promise<{ pid: number; state: string | null; waitType: string | null; wait: string | null }[]> {
    const { rows } = await this.#admin.query(
      'SELECT pid, state, wait_event_type AS wait_type, wait_event AS wait FROM pg_stat_activity WHERE application_name = $1',
      [this.#applicationName],
    );
    return rows.map((row) => ({ pid: Number(row.pid), state: row.state, waitType: row.wait_type, wait: row.wait }));
  }

  async #sample(): Promise<void> {
    for (const backend of await this.#backends()) {
      this.#cpuLastSeen.set(backend.pid, cpuOf(backend.pid));
      this.#samples.states += 1;
      if (backend.state !== 'idle') this.#samples.active += 1;
      if (backend.waitType === 'Lock') this.#samples.lockWaits += 1;
      if (backend.wait?.startsWith('WAL')) this.#samples.walWaits += 1;
    }
  }
}

function middle(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const half = (sorted.length - 1) / 2;
  return (sorted[Math.floor(half)] + sorted[Math.ceil(half)]) / 2;
}

/** The ledger identities of one account, as its rows hold them. */
const LEDGER_SQL = (placeholder: string) => `SELECT
  (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE owner_id = ${placeholder} AND kind = 'credit') AS credits,
  (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE owner_id = ${placeholder} AND kind = 'charge') AS charges,
  (SELECT coalesce(sum(amount), 0) FROM reservations WHERE owner_id = ${placeholder} AND status = 'open') AS open_holds,
  balance, reserved FROM wallets WHERE owner_id = ${placeholder}`;

/** true, or what is wrong: credits − charges = balance and nothing held once the load is over. */
function ledgerVerdict(row: Record<string, unknown> | undefined): string | true {
  if (!row) return 'no wallet';
  const big = (name: string) => BigInt(row[name] as string | number | bigint);
  if (big('credits') - big('charges') !== big('balance')) return `credits − charges = ${big('credits') - big('charges')}, balance ${big('balance')}`;
  if (big('open_holds') !== big('reserved')) return `open holds ${big('open_holds')}, reserved ${big('reserved')}`;
  if (big('reserved') !== 0n) return `${big('reserved')} still held after the load`;
  if (big('charges') === 0n) return 'nothing was charged';
  return true;
}

async function checkPostgresLedger(admin: pg.Client, accountId: string): Promise<string | true> {
  return ledgerVerdict((await admin.query(LEDGER_SQL('$1'), [accountId])).rows[0]);
}

/** Read beside the running server (read-only; it writes behind within milliseconds). */
function checkEmbeddedLedger(gateway: RunningGateway): string | true {
  const file = new DatabaseSync(join(gateway.dataDir!, SQLITE_FILE_NAME), { readOnly: true });
  try {
    const statement = file.prepare(LEDGER_SQL('?1'));
    statement.setReadBigInts(true);
    return ledgerVerdict(statement.get(gateway.accountId) as Record<string, unknown> | undefined);
  } finally {
    file.close();
  }
}

async function main(): Promise<void> {
  const repoRoot = fileURLToPath(new URL('..', import.meta.url));
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '5' },
      database: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? DEFAULT_BENCH_DATABASE_URL },
      redis: { type: 'string', default: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379' },
    },
  });
  const { group, upstreamOrigin } = await startStandaloneSimulator(repoRoot);
  try {
    const { loadavg } = await import('node:os');
    const result = await measureScaleOut(
      group,
      {
        repoRoot,
        upstreamOrigin,
        redisUrl: values.redis === 'none' ? undefined : values.redis,
        databaseUrl: values.database,
        rounds: Number(values.rounds),
        seconds: Number(values.seconds),
        timeoutMs: 60_000,
      },
      () => loadavg()[0],
      console.log,
    );
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await group.stopAll();
  }
}

if (import.meta.main) await main();
