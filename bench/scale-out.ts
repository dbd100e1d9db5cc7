/**
 * The scale-out path (docs/performance.md, "The scale-out path" and "One busy account on
 * PostgreSQL"): the chat, chat-stream, messages, responses and jobs (background responses)
 * workloads, all on one account's key, on three set-ups started side by side — the embedded store,
 * one instance on PostgreSQL (and Redis, when one answers), and two instances on the same
 * PostgreSQL database sharing the account (the load split between them). PostgreSQL and Redis run
 * on the load core beside the simulator (bench/placement.ts), the instances on the core under test.
 *
 * Per workload: saturation runs at 50 connections in alternating rounds (the order turns each
 * round) — throughput, each instance's CPU per request, PostgreSQL's backends' CPU per request and
 * their states sampled in pg_stat_activity (lock waits), and the database round trips per request
 * (the instances' `gateway_database_round_trips_total` over the requests answered); then one run
 * at the paced rate (bench/paced.ts) per set-up for p50 and p99, with its round trips and CPU too;
 * then the ledger of every store is checked exact. A job counts when it has ended: the jobs
 * workload waits for the instances' `gateway_jobs_ended_total` to count every job it submitted.
 *
 * `npm run bench` runs it (`scale` in `--only`); on its own:
 * `node bench/scale-out.ts [--workloads=chat,…] [--rounds=2] [--seconds=3] [--paced-seconds=3]
 * [--rate=500] [--database=URL] [--redis=URL|none]`.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { readMetrics, startGateway, type RunningGateway } from './gateway.ts';
import { runClosedLoop, type ClosedLoopResult } from './load.ts';
import { runPaced } from './paced.ts';
import { placeServers } from './placement.ts';
import { CORE_LOAD, cpuSeconds, detectPlacement, type ProcessGroup, startStandaloneSimulator } from './processes.ts';
import type { RequestSpec } from './request-spec.ts';
import type { LatencySummary } from './stats.ts';
import { SQLITE_FILE_NAME } from '../src/storage/open-store.ts';
import { GATEWAY_MODELS, workloadOf } from './workloads.ts';

/** Where the PostgreSQL set-ups run unless told otherwise (a schema of their own, dropped at the end). */
export const DEFAULT_BENCH_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
export const SCALE_WORKLOADS = ['chat', 'chat-stream', 'messages', 'responses', 'jobs'] as const;
/**
 * Also measurable (`--workloads`): chat with a key that has every limit, spend limits included,
 * whose hold is a transaction of its own (docs/performance.md, "The scale-out path").
 */
export const MORE_SCALE_WORKLOADS = ['chat-limited'] as const;
export type ScaleWorkloadId = (typeof SCALE_WORKLOADS)[number] | (typeof MORE_SCALE_WORKLOADS)[number];
/** The workloads of one busy account's bars (issue: a busy account as fast on PostgreSQL). */
export const BUSY_ACCOUNT_WORKLOADS: readonly ScaleWorkloadId[] = ['chat', 'chat-stream'];
/** Answered without streaming: the round-trip bar applies to them. */
export const UNSTREAMED_WORKLOADS: readonly ScaleWorkloadId[] = ['chat', 'messages', 'responses', 'chat-limited'];
const CONNECTIONS = 50;

export type SetupName = 'embedded' | 'postgres' | 'postgres-2';
const SETUPS: readonly SetupName[] = ['embedded', 'postgres', 'postgres-2'];

/** A background response on chat's model (docs/jobs.md): answered `queued`, run by the workers. */
const JOB_REQUEST = (key: string): RequestSpec => ({
  method: 'POST',
  path: '/v1/responses',
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ model: GATEWAY_MODELS.chat, input: 'A background job: say hello.', max_output_tokens: 64, background: true }),
});

/** The request a workload sends to an instance, with the key it uses. */
type RequestOf = (gateway: RunningGateway) => RequestSpec;

function requestOf(id: ScaleWorkloadId): RequestOf {
  if (id === 'jobs') return (gateway) => JOB_REQUEST(gateway.apiKey);
  const workload = workloadOf(id);
  return (gateway) => workload.gateway(workload.key === 'limited' ? gateway.limitedKey : gateway.apiKey);
}

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
  /** Requests answered per second (jobs: ended per second, first submission to last end). */
  readonly requestsPerSecond: number;
  readonly failed: number;
  /** PostgreSQL backends' CPU per answered request, µs (PostgreSQL set-ups). */
  readonly databaseMicrosPerRequest: number | null;
  /** Every instance on the set-up's store: their CPU over all its answered requests, µs. */
  readonly gatewayMicrosPerRequest: number | null;
  /** Each instance's CPU over the requests it answered, µs. */
  readonly instanceMicrosPerRequest: readonly (number | null)[];
  /** Statements the instances sent to PostgreSQL over the requests answered (PostgreSQL set-ups). */
  readonly roundTripsPerRequest: number | null;
  readonly backends: BackendSamples | null;
}

/** One paced run of a set-up: latency at the rate, and what a request cost there. */
export interface PacedFigures {
  readonly rate: number;
  readonly achievedRate: number;
  readonly completed: number;
  readonly failed: number;
  readonly latency: LatencySummary | null;
  readonly instanceMicrosPerRequest: readonly (number | null)[];
  readonly roundTripsPerRequest: number | null;
}

export interface ScaleWorkloadResult {
  readonly id: ScaleWorkloadId;
  readonly rounds: readonly Readonly<Record<SetupName, SetupRound>>[];
  /** Medians over the rounds. */
  readonly median: Readonly<
    Record<
      SetupName,
      {
        readonly requestsPerSecond: number;
        /** Every instance on the store: their CPU over the requests answered, µs. */
        readonly gatewayMicrosPerRequest: number | null;
        /** Each loaded instance's CPU over the requests it answered, µs. */
        readonly instanceMicrosPerRequest: readonly (number | null)[];
        readonly databaseMicrosPerRequest: number | null;
        readonly roundTripsPerRequest: number | null;
      }
    >
  >;
  /** At the paced rate, each set-up; a string when the run failed. */
  readonly paced: Readonly<Record<SetupName, PacedFigures | string>>;
  /**
   * One request at a time to one instance on PostgreSQL (SEQUENTIAL_SECONDS): round trips per
   * request with nothing to share a commit with, the request path's own count.
   */
  readonly sequential:
    | {
        readonly requests: number;
        readonly roundTripsPerRequest: number | null;
        /**
         * The same less the idle instance's round trips over the same time (its change-feed and
         * job polls, heartbeats: what every instance sends whatever its load), so the requests' own;
         * null for jobs, which the idle instance's workers may take.
         */
        readonly ownRoundTripsPerRequest: number | null;
      }
    | string;
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
  readonly pacedSeconds: number;
  readonly pacedRate: number;
  /** Where PostgreSQL and Redis ran, or why they could not be placed. */
  readonly placement: string;
  /** One-minute load average before and after: the machine is shared, so the ratios are what to read. */
  readonly loadAverage: readonly [number, number];
  readonly workloads: readonly ScaleWorkloadResult[];
  /** Workloads that could not be measured, and why. */
  readonly failures: readonly { readonly id: ScaleWorkloadId; readonly error: string }[];
}

export interface ScaleOutOptions {
  readonly repoRoot: string;
  readonly upstreamOrigin: string;
  readonly redisUrl: string | undefined;
  readonly databaseUrl: string;
  readonly workloads: readonly ScaleWorkloadId[];
  readonly rounds: number;
  readonly seconds: number;
  readonly pacedSeconds: number;
  readonly pacedRate: number;
  /** Whether the run pins processes to cores (then PostgreSQL and Redis go to the load core). */
  readonly pinned: boolean;
  readonly timeoutMs: number;
}

const SAMPLE_MS = 50;
/** The run of one request at a time (a few hundred requests). */
const SEQUENTIAL_SECONDS = 1;
/** The longest the ledger may take to be exact once a workload's load is over. */
const LEDGER_WAIT_MS = 30_000;
/** The longest the jobs of one run may take to end once submitted. */
const JOBS_DRAIN_MS = 120_000;

/** The instances a set-up's load is sent to, and every instance on its store (whose CPU and counters are read). */
interface Setup {
  readonly loaded: readonly RunningGateway[];
  readonly watched: readonly RunningGateway[];
}

interface Context extends ScaleOutOptions {
  readonly admin: pg.Client;
  readonly applicationName: string;
}

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
  const servers = await placeServers(admin, options.redisUrl, CORE_LOAD, options.pinned);
  log(`scale-out · ${servers.note}`);
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.query(`SET search_path TO ${schema}`);
    const url = new URL(options.databaseUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    url.searchParams.set('application_name', applicationName);
    // The PostgreSQL instances are one deployment: they count limits in the same Redis keys.
    const redisPrefix = `gateway-bench:${schema}:`;
    const start = async (databaseUrl?: string, account?: RunningGateway) => {
      const gateway = await startInstance(group, options, databaseUrl === undefined ? undefined : { url: databaseUrl, account, redisPrefix });
      started.push(gateway);
      return gateway;
    };
    const embedded = await start();
    const first = await start(url.href);
    const second = await start(url.href, first);
    // The second instance runs beside the first in the one-instance set-up too, idle but for its
    // background work, and its job workers take jobs from the shared queue: it is watched (its CPU,
    // round trips and ended jobs counted) in both PostgreSQL set-ups.
    const setups: Record<SetupName, Setup> = {
      embedded: { loaded: [embedded], watched: [embedded] },
      postgres: { loaded: [first], watched: [first, second] },
      'postgres-2': { loaded: [first, second], watched: [first, second] },
    };
    const workloads: ScaleWorkloadResult[] = [];
    const failures: { id: ScaleWorkloadId; error: string }[] = [];
    for (const id of options.workloads) {
      try {
        workloads.push(await measureWorkload(id, setups, { ...options, admin, applicationName }, log));
      } catch (error) {
        // One workload that fails leaves the others measured; the report prints why.
        failures.push({ id, error: error instanceof Error ? error.message.split('\n')[0] : String(error) });
        log(`scale-out · ${id} FAILED: ${failures.at(-1)!.error}`);
      }
    }
    return {
      counters: options.redisUrl ? 'redis' : 'memory',
      rounds: options.rounds,
      seconds: options.seconds,
      pacedSeconds: options.pacedSeconds,
      pacedRate: options.pacedRate,
      placement: servers.note,
      loadAverage: [loadBefore, loadAverage()],
      workloads,
      failures,
    };
  } finally {
    for (const gateway of started) await group.stop(gateway.child);
    for (const gateway of started) gateway.cleanup();
    servers.restore();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

/**
 * A gateway of the scale-out measurements (and of the race): the bench catalog, on the embedded
 * store or on `database` — a PostgreSQL URL, the account of an instance already on it, and the
 * Redis prefix the instances of one deployment share.
 */
export function startInstance(
  group: ProcessGroup,
  options: Pick<ScaleOutOptions, 'repoRoot' | 'upstreamOrigin' | 'redisUrl' | 'timeoutMs'>,
  database?: { readonly url: string; readonly account: RunningGateway | undefined; readonly redisPrefix: string },
): Promise<RunningGateway> {
  return startGateway(group, {
    repoRoot: options.repoRoot,
    upstreamOrigin: options.upstreamOrigin,
    firstGapMs: 10,
    holdMs: 400,
    cpuProfileDir: undefined,
    dataRoot: undefined,
    timeoutMs: options.timeoutMs,
    redisUrl: options.redisUrl,
    databaseUrl: database?.url,
    account: database?.account,
    redisPrefix: database?.redisPrefix,
  });
}

const micros = (value: number | null | undefined) => (value === null || value === undefined || Number.isNaN(value) ? '—' : String(Math.round(value)));
const trips = (value: number | null | undefined) => (value === null || value === undefined ? '' : `, ${value.toFixed(2)} round trips`);

async function measureWorkload(id: ScaleWorkloadId, setups: Readonly<Record<SetupName, Setup>>, context: Context, log: (line: string) => void) {
  const request = requestOf(id);
  const jobs = id === 'jobs';
  const run = (name: SetupName, seconds: number) => runSetup(setups[name], request, jobs, seconds, name === 'embedded' ? null : context);
  // A gateway just started costs more per request over its first seconds of load.
  for (const name of SETUPS) await run(name, Math.min(2, context.seconds));
  const rounds: Record<SetupName, SetupRound>[] = [];
  for (let round = 0; round < context.rounds; round++) {
    // The order turns each round, so that a drift of the shared machine weighs on all alike.
    const order = SETUPS.map((_, index) => SETUPS[(index + round) % SETUPS.length]);
    const measured = {} as Record<SetupName, SetupRound>;
    for (const name of order) measured[name] = await run(name, context.seconds);
    rounds.push(measured);
    const figures = (name: SetupName) => {
      const { requestsPerSecond, instanceMicrosPerRequest, databaseMicrosPerRequest, roundTripsPerRequest } = measured[name];
      const database = databaseMicrosPerRequest === null ? '' : ` + PostgreSQL ${micros(databaseMicrosPerRequest)}`;
      return `${name} ${Math.round(requestsPerSecond)} req/s (CPU µs per request: ${instanceMicrosPerRequest.map(micros).join(' / ')}${database}${trips(roundTripsPerRequest)})`;
    };
    log(`scale-out · ${id} round ${round + 1}: ${SETUPS.map(figures).join(', ')}`);
  }
  const paced = {} as Record<SetupName, PacedFigures | string>;
  for (const name of SETUPS) {
    paced[name] = await runPacedSetup(setups[name], request, jobs, context, name !== 'embedded').catch((error: unknown) =>
      error instanceof Error ? error.message.split('\n')[0] : String(error),
    );
    const figures = paced[name];
    log(
      `scale-out · ${id} at ${context.pacedRate}/s · ${name}: ${
        typeof figures === 'string'
          ? figures
          : `p50 ${figures.latency?.p50.toFixed(2)} ms, p99 ${figures.latency?.p99.toFixed(2)} ms, ${figures.failed} failed${trips(figures.roundTripsPerRequest)}`
      }`,
    );
  }
  const sequential = await runSequential(setups.postgres, request, jobs).catch((error: unknown) =>
    error instanceof Error ? error.message.split('\n')[0] : String(error),
  );
  log(
    `scale-out · ${id} one at a time · postgres: ${
      typeof sequential === 'string'
        ? sequential
        : `${sequential.requests} requests${trips(sequential.roundTripsPerRequest)}${sequential.ownRoundTripsPerRequest === null ? '' : ` (${sequential.ownRoundTripsPerRequest.toFixed(2)} less the idle instance's)`}`
    }`,
  );
  const median = Object.fromEntries(
    SETUPS.map((name) => {
      const of = (read: (round: SetupRound) => number | null) => {
        const values = rounds.map((round) => read(round[name])).filter((value) => value !== null);
        return values.length === 0 ? null : middle(values);
      };
      return [
        name,
        {
          requestsPerSecond: of((round) => round.requestsPerSecond) ?? Number.NaN,
          gatewayMicrosPerRequest: of((round) => round.gatewayMicrosPerRequest),
          instanceMicrosPerRequest: setups[name].loaded.map((_, index) => of((round) => round.instanceMicrosPerRequest[index])),
          databaseMicrosPerRequest: of((round) => round.databaseMicrosPerRequest),
          roundTripsPerRequest: of((round) => round.roundTripsPerRequest),
        },
      ];
    }),
  ) as unknown as ScaleWorkloadResult['median'];
  const samples = rounds.flatMap((round) => [round.postgres.backends, round['postgres-2'].backends]).filter((sample) => sample !== null);
  const states = samples.reduce((total, sample) => total + sample.states, 0);
  const active = samples.reduce((total, sample) => total + sample.active, 0);
  const lockWaits = samples.reduce((total, sample) => total + sample.lockWaits, 0);
  // Whatever was still settling when the load stopped (requests of a paced run given up on, a
  // credit lease not yet given back) ends within moments: waited for, not raced, up to LEDGER_WAIT_MS.
  const check = async () => ({
    embedded: checkEmbeddedLedger(setups.embedded.loaded[0]),
    postgres: await checkPostgresLedger(context.admin, setups.postgres.loaded[0].accountId),
  });
  const deadline = Date.now() + LEDGER_WAIT_MS;
  let ledgerExact = await check();
  while ((ledgerExact.embedded !== true || ledgerExact.postgres !== true) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    ledgerExact = await check();
  }
  log(
    `scale-out · ${id} ledger: embedded ${ledgerExact.embedded === true ? 'exact' : ledgerExact.embedded}, PostgreSQL ${ledgerExact.postgres === true ? 'exact' : ledgerExact.postgres}`,
  );
  return {
    id,
    rounds,
    median,
    paced,
    sequential,
    postgresOverEmbedded: median.postgres.requestsPerSecond / median.embedded.requestsPerSecond,
    twoOverOne: median['postgres-2'].requestsPerSecond / median.postgres.requestsPerSecond,
    lockWaitShare: states === 0 ? 0 : lockWaits / states,
    lockWaitShareOfActive: active === 0 ? 0 : lockWaits / active,
    ledgerExact,
  };
}

/** What an instance's /metrics counts: its database round trips and its ended background responses. */
interface Counters {
  readonly roundTrips: number;
  readonly jobsEnded: number;
}

const ROUND_TRIPS = /^gateway_database_round_trips_total (\d+)$/m;
const JOBS_ENDED = /^gateway_jobs_ended_total\{kind="response",status="[a-z_]+"\} (\d+)$/gm;

async function countersOf(gateway: RunningGateway): Promise<Counters> {
  const text = await readMetrics(gateway.origin, ['gateway_database_round_trips_total', 'gateway_jobs_ended_total']);
  const roundTrips = ROUND_TRIPS.exec(text);
  if (roundTrips === null) throw new Error('the gateway reports no gateway_database_round_trips_total in /metrics');
  return { roundTrips: Number(roundTrips[1]), jobsEnded: [...text.matchAll(JOBS_ENDED)].reduce((sum, match) => sum + Number(match[1]), 0) };
}

/**
 * The CPU and counters of a set-up's instances around some load: `measure` runs the load and
 * returns how many requests each instance answered; jobs are then waited for until all have ended.
 */
async function around<T extends { readonly answered: readonly number[] }>(
  setup: Setup,
  jobs: boolean,
  measure: () => Promise<T>,
): Promise<
  T & {
    readonly instanceMicrosPerRequest: readonly (number | null)[];
    readonly cpu: number;
    readonly roundTrips: number;
    /** Of each watched instance. */
    readonly roundTripsByInstance: readonly number[];
    readonly elapsedMs: number;
  }
> {
  const gateways = setup.watched;
  const cpu = () => gateways.map((gateway) => cpuOf(gateway.child.pid));
  const counters = () => Promise.all(gateways.map(countersOf));
  const before = await counters();
  const cpuBefore = cpu();
  const startedAt = performance.now();
  const result = await measure();
  const total = result.answered.reduce((sum, count) => sum + count, 0);
  let after = await counters();
  // Jobs of the shared queue may run on either instance: it is their sum that must count them all.
  const ended = () => after.reduce((sum, each, index) => sum + each.jobsEnded - before[index].jobsEnded, 0);
  const deadline = Date.now() + JOBS_DRAIN_MS;
  while (jobs && ended() < total) {
    if (Date.now() > deadline) {
      throw new Error(
        `${total - ended()} of ${total} background responses had not ended after ${JOBS_DRAIN_MS / 1000} s (${gateways.length} instance${gateways.length > 1 ? 's' : ''})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    after = await counters();
  }
  const elapsedMs = performance.now() - startedAt;
  const used = cpu().map((after, index) => after - cpuBefore[index]);
  return {
    ...result,
    // Each loaded instance's CPU over the requests it answered; the whole over all of them.
    instanceMicrosPerRequest: setup.loaded.map((gateway, index) => perRequest(used[gateways.indexOf(gateway)] * 1e6, result.answered[index])),
    cpu: used.reduce((sum, each) => sum + each, 0),
    roundTrips: after.reduce((sum, each, index) => sum + each.roundTrips - before[index].roundTrips, 0),
    roundTripsByInstance: after.map((each, index) => each.roundTrips - before[index].roundTrips),
    elapsedMs,
  };
}

const perRequest = (amount: number, requests: number) => (requests > 0 ? amount / requests : null);

/** One saturation run of a set-up: its connections split over its instances, all at once. */
async function runSetup(setup: Setup, request: RequestOf, jobs: boolean, seconds: number, database: Context | null): Promise<SetupRound> {
  const sampler = database ? new BackendSampler(database.admin, database.applicationName) : null;
  await sampler?.start();
  // The sampler stops whatever happens: it must not outlive the run, nor query a closed connection.
  const gateways = setup.loaded;
  const measured = await around(setup, jobs, async () => {
    const results: ClosedLoopResult[] = await Promise.all(
      gateways.map((gateway) =>
        runClosedLoop(
          { origin: gateway.origin, request: request(gateway) },
          { connections: CONNECTIONS / gateways.length, durationSeconds: seconds, timeoutMs: seconds * 1000 + 15_000 },
        ),
      ),
    );
    return { results, answered: results.map((result) => result.completedInRun) };
  }).catch(async (error: unknown) => {
    await sampler?.stop();
    throw error;
  });
  const backends = await sampler?.stop();
  const completed = measured.answered.reduce((sum, count) => sum + count, 0);
  return {
    // A job is done when it has ended, not when it was queued.
    requestsPerSecond: jobs ? completed / (measured.elapsedMs / 1000) : measured.results.reduce((total, result) => total + result.requestsPerSecond, 0),
    failed: measured.results.reduce((total, result) => total + result.non2xx + result.errors, 0),
    databaseMicrosPerRequest: backends ? perRequest(backends.cpuSeconds * 1e6, completed) : null,
    gatewayMicrosPerRequest: perRequest(measured.cpu * 1e6, completed),
    instanceMicrosPerRequest: measured.instanceMicrosPerRequest,
    roundTripsPerRequest: database ? perRequest(measured.roundTrips, completed) : null,
    backends: backends?.samples ?? null,
  };
}

/** One request at a time to the set-up's first instance, for SEQUENTIAL_SECONDS: its round trips per request. */
async function runSequential(setup: Setup, request: RequestOf, jobs: boolean): Promise<Exclude<ScaleWorkloadResult['sequential'], string>> {
  const gateway = setup.loaded[0];
  const idle = setup.watched.find((each) => !setup.loaded.includes(each));
  const measured = await around(setup, jobs, async () => {
    const result = await runClosedLoop(
      { origin: gateway.origin, request: request(gateway) },
      { connections: 1, durationSeconds: SEQUENTIAL_SECONDS, timeoutMs: SEQUENTIAL_SECONDS * 1000 + 15_000 },
    );
    return { answered: [result.completedInRun] };
  });
  const [loadedTrips, idleTrips] = [gateway, idle].map((each) => (each === undefined ? 0 : measured.roundTripsByInstance[setup.watched.indexOf(each)]));
  return {
    requests: measured.answered[0],
    roundTripsPerRequest: perRequest(measured.roundTrips, measured.answered[0]),
    ownRoundTripsPerRequest: jobs || idle === undefined ? null : perRequest(loadedTrips - idleTrips, measured.answered[0]),
  };
}

/** One paced run of a set-up: request i to instance i mod n, at the rate in all. */
async function runPacedSetup(setup: Setup, request: RequestOf, jobs: boolean, options: ScaleOutOptions, database: boolean): Promise<PacedFigures> {
  const gateways = setup.loaded;
  const measured = await around(setup, jobs, async () => {
    const result = await runPaced(
      gateways.map((gateway) => ({ origin: gateway.origin, request: request(gateway) })),
      { rate: options.pacedRate, durationSeconds: options.pacedSeconds, timeoutMs: 30_000 },
    );
    // Requests go round-robin: each instance answered its share.
    return {
      result,
      answered: gateways.map((_, index) => Math.floor(result.completed / gateways.length) + (index < result.completed % gateways.length ? 1 : 0)),
    };
  });
  const { result } = measured;
  return {
    rate: result.rate,
    achievedRate: result.achievedRate,
    completed: result.completed,
    failed: result.failed,
    latency: result.latency,
    instanceMicrosPerRequest: measured.instanceMicrosPerRequest,
    roundTripsPerRequest: database ? perRequest(measured.roundTrips, result.completed) : null,
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
      // A sample that fails (the database busy or restarting) is left out, not fatal.
      this.#sampling ??= this.#sample()
        .catch(() => undefined)
        .finally(() => (this.#sampling = null));
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

export async function checkPostgresLedger(admin: pg.Client, accountId: string): Promise<string | true> {
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
      workloads: { type: 'string', default: SCALE_WORKLOADS.join(',') },
      rounds: { type: 'string', default: '2' },
      seconds: { type: 'string', default: '3' },
      'paced-seconds': { type: 'string', default: '3' },
      rate: { type: 'string', default: '500' },
      database: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? DEFAULT_BENCH_DATABASE_URL },
      redis: { type: 'string', default: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379' },
    },
  });
  const workloads = values.workloads.split(',').map((id) => id.trim());
  const known: readonly string[] = [...SCALE_WORKLOADS, ...MORE_SCALE_WORKLOADS];
  for (const id of workloads) if (!known.includes(id)) throw new Error(`unknown workload ${id}: ${known.join(', ')}`);
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
        workloads: workloads as ScaleWorkloadId[],
        rounds: Number(values.rounds),
        seconds: Number(values.seconds),
        pacedSeconds: Number(values['paced-seconds']),
        pacedRate: Number(values.rate),
        pinned: detectPlacement(true).pinned,
        timeoutMs: 60_000,
      },
      () => loadavg()[0],
      console.error,
    );
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await group.stopAll();
  }
}

if (import.meta.main) await main();
