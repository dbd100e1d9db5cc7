/**
 * The gateway under test: started as `npm start` starts it (`node … src/main.ts`) on the embedded
 * store (SQLite in a fresh temporary GATEWAY_DATA_DIR) or on a PostgreSQL database, the benchmark
 * catalog (bench/config.yaml) and the admin API on; then a funded account and its key are created
 * through the admin API (or those of an instance already started on the same database are used),
 * so auth and billing are on for every measured request.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readStartScript, type StartScript } from '../bin/start-script.js';
import { CORE_UNDER_TEST, freePort, waitForHttp, type Child, type ProcessGroup } from './processes.ts';
import type { RequestSpec } from './request-spec.ts';
import { type Workload, workloadOf } from './workloads.ts';

/** Credit of the benchmark account: far more than any run spends. */
const CREDIT_USD = '100000';
const UPSTREAM_KEY = 'bench-upstream-key';

/** The funded account a gateway's measured requests spend, and its keys. */
export interface BenchAccount {
  readonly accountId: string;
  readonly apiKey: string;
  /** A key of the same account with every limit set, none of which a run reaches. */
  readonly limitedKey: string;
}

export interface RunningGateway extends BenchAccount {
  readonly child: Child;
  readonly origin: string;
  /** The embedded store's data directory (its SQLite file), or null on PostgreSQL. */
  readonly dataDir: string | null;
  /** Where its counters live: `redis` when BENCH_REDIS_URL (default the local Redis) answered at start. */
  readonly limitCounters: 'memory' | 'redis';
  /** Its admin API key (the dashboard workload makes a user with it). */
  readonly adminKey: string;
  /** Makes one more funded account with its keys, through the admin API. */
  newAccount(name: string): Promise<BenchAccount>;
  /** Removes the temporary data directory; call after the process has stopped. */
  cleanup(): void;
}

export interface GatewayStartOptions {
  readonly repoRoot: string;
  readonly upstreamOrigin: string;
  readonly firstGapMs: number;
  readonly holdMs: number;
  readonly cpuProfileDir: string | undefined;
  /** More options for the gateway's node (an inspector port, GC tracing), before the script. */
  readonly extraNodeArgs?: readonly string[];
  /** Parent of the temporary data directory; the OS temp dir when undefined. */
  readonly dataRoot: string | undefined;
  readonly timeoutMs: number;
  /** The Redis the limit counters use; none (in-process counters) when undefined. */
  readonly redisUrl: string | undefined;
  /** A PostgreSQL `DATABASE_URL`; the embedded store when undefined. */
  readonly databaseUrl?: string;
  /** The account of an instance already running on the same database: no new one is made. */
  readonly account?: BenchAccount;
  /**
   * The key prefix in Redis; a fresh one when undefined. Instances of one deployment share theirs,
   * so that they count the same limits.
   */
  readonly redisPrefix?: string;
}

/** Why the gateway cannot be benchmarked in this checkout, or null when it can. */
export function gatewayMissing(repoRoot: string): string | null {
  return existsSync(join(repoRoot, 'src', 'main.ts')) ? null : 'src/main.ts not found';
}

/**
 * The command of a `npm start` script (bin/start-script.js), so that the benchmark measures the
 * gateway as it is run: `MALLOC_ARENA_MAX=2 node --max-semi-space-size=8 src/main.ts` gives that
 * variable and `--max-semi-space-size=8 src/main.ts`.
 */
export function startCommand({ env, command, args }: StartScript): { env: Record<string, string>; nodeArgs: string[] } {
  if (command !== 'node') throw new Error(`npm start runs ${JSON.stringify(command)}, not node: the benchmark cannot mirror it`);
  return { env, nodeArgs: args };
}

export async function startGateway(group: ProcessGroup, options: GatewayStartOptions): Promise<RunningGateway> {
  const workDir = mkdtempSync(join(options.dataRoot ?? tmpdir(), 'gateway-bench-'));
  const cleanup = () => rmSync(workDir, { recursive: true, force: true });
  try {
    const configPath = join(workDir, 'config.yaml');
    writeFileSync(configPath, renderConfig(readFileSync(join(options.repoRoot, 'bench', 'config.yaml'), 'utf8'), options));
    const port = await freePort();
    const adminKey = randomBytes(24).toString('hex');
    const profiling = options.cpuProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`];
    const start = startCommand(readStartScript(options.repoRoot));
    const child = group.start({
      name: 'gateway',
      nodeArgs: [...profiling, ...(options.extraNodeArgs ?? []), ...start.nodeArgs],
      core: CORE_UNDER_TEST,
      cwd: options.repoRoot,
      env: {
        ...start.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        GATEWAY_CONFIG: configPath,
        GATEWAY_DATA_DIR: join(workDir, 'data'),
        GATEWAY_ADMIN_KEY: adminKey,
        // The embedded store unless a database is given, whatever the environment of the run says.
        DATABASE_URL: options.databaseUrl ?? '',
        REDIS_URL: options.redisUrl ?? '',
        GATEWAY_REDIS_PREFIX: options.redisPrefix ?? `gateway-bench:${randomBytes(6).toString('hex')}:`,
        LOG_LEVEL: 'warn',
        // Every connection of the benchmark comes from one address, as behind a proxy: the
        // many-open-streams test alone opens 1,000 beside the connections still idle from before.
        GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: '10000',
        BENCH_UPSTREAM_KEY: UPSTREAM_KEY,
      },
    });
    const origin = `http://127.0.0.1:${port}`;
    await waitForHttp(`${origin}/healthz`, child, options.timeoutMs);
    const newAccount = (name: string) => provisionKeys(origin, adminKey, name);
    const account = options.account ?? (await newAccount('bench'));
    const dataDir = options.databaseUrl === undefined ? join(workDir, 'data') : null;
    return { ...account, child, origin, dataDir, limitCounters: options.redisUrl ? 'redis' : 'memory', adminKey, newAccount, cleanup };
  } catch (error) {
    cleanup();
    throw error;
  }
}

function renderConfig(template: string, options: GatewayStartOptions): string {
  return template
    .replaceAll('{{upstream}}', options.upstreamOrigin)
    .replaceAll('{{first_gap_ms}}', String(options.firstGapMs))
    .replaceAll('{{hold_ms}}', String(options.holdMs));
}

/** POSTs to the admin API of a gateway (its admin key), failing on any answer but a 2xx. */
export async function admin<T>(origin: string, adminKey: string, path: string, body: unknown): Promise<T> {
  const response = await fetch(`${origin}/admin/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`admin API POST ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Every limit of docs/limits.md, each far above what a run reaches. */
const UNREACHED_LIMITS = {
  requests_per_minute: 1_000_000_000,
  tokens_per_minute: 1_000_000_000,
  concurrent_requests: 1_000_000,
  spend_per_day_usd: '1000000',
  spend_per_month_usd: '1000000',
  spend_limit_usd: '1000000',
};

/** A funded account with an unrestricted key and a key with every limit set, through the admin API. */
async function provisionKeys(origin: string, adminKey: string, name: string): Promise<BenchAccount> {
  const account = await admin<{ id: string }>(origin, adminKey, '/accounts', { name });
  await admin(origin, adminKey, `/accounts/${account.id}/credit`, { amount_usd: CREDIT_USD, note: 'benchmark' });
  const key = await admin<{ key: string }>(origin, adminKey, '/keys', { account_id: account.id, name: 'bench' });
  const limited = await admin<{ key: string }>(origin, adminKey, '/keys', { account_id: account.id, name: 'bench-limited', limits: UNREACHED_LIMITS });
  return { accountId: account.id, apiKey: key.key, limitedKey: limited.key };
}

export type Availability = { readonly available: true } | { readonly available: false; readonly reason: string };

interface ProbeAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

async function send(origin: string, request: RequestSpec): Promise<ProbeAnswer> {
  const response = await fetch(origin + request.path, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

function errorCode(text: string): string | null {
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown } };
    return typeof parsed.error?.code === 'string' ? parsed.error.code : null;
  } catch {
    return null;
  }
}

/**
 * Whether the gateway serves a workload yet: a route that is not registered (404 other than
 * model_not_found) is "not available"; any other failure is reported with its status and body,
 * and the workload is not measured.
 */
export async function probeWorkload(origin: string, apiKey: string, workload: Workload): Promise<Availability> {
  const request = workload.gateway(apiKey);
  const first = await send(origin, request);
  if (first.status === 404 && errorCode(first.text) !== 'model_not_found') {
    return { available: false, reason: `not available (${request.method} ${request.path} answers 404)` };
  }
  if (first.status < 200 || first.status >= 300) {
    return { available: false, reason: `failed: ${first.status} ${first.text.slice(0, 300)}` };
  }
  switch (workload.probe) {
    case 'success':
      return { available: true };
    case 'idempotent-replay': {
      const second = await send(origin, request);
      if (second.status >= 200 && second.status < 300 && second.headers.get('idempotent-replayed') === 'true') return { available: true };
      return { available: false, reason: `not available (a repeated Idempotency-Key is not replayed: ${second.status})` };
    }
    default: {
      const unreachable: never = workload.probe;
      throw new Error(`unknown probe ${String(unreachable)}`);
    }
  }
}

/**
 * The named metrics of a gateway's /metrics (`?name=`): a poller that reads a counter or two should
 * not make every gauge collect, some of which count in the database (the jobs backlog) on the core
 * being measured.
 */
export async function readMetrics(origin: string, names: readonly string[]): Promise<string> {
  const query = names.map((name) => `name=${encodeURIComponent(name)}`).join('&');
  return (await fetch(`${origin}/metrics?${query}`, { signal: AbortSignal.timeout(10_000) })).text();
}

/** The jobs of a kind the gateway has ended so far, whatever their status (`gateway_jobs_ended_total`). */
export async function endedJobs(origin: string, kind: string): Promise<number> {
  const text = await readMetrics(origin, ['gateway_jobs_ended_total']);
  return sumOfSeries(text, new RegExp(`^gateway_jobs_ended_total\\{kind="${kind}",status="[a-z_]+"\\} (\\d+)$`, 'gm'));
}

/** The sum of the values of the series `pattern` matches (its first group) in a Prometheus text. */
export function sumOfSeries(text: string, pattern: RegExp): number {
  return [...text.matchAll(pattern)].reduce((sum, match) => sum + Number(match[1]), 0);
}

/**
 * Loads the gateway's tokenizer (on first use: one count of tokens), so that what is measured after
 * is a gateway that carries it, as one serving count_tokens or long prompts does.
 */
export async function loadTokenizer(gateway: { readonly origin: string; readonly apiKey: string }): Promise<void> {
  const { method, path, headers, body } = workloadOf('count-tokens').gateway(gateway.apiKey);
  const response = await fetch(`${gateway.origin}${path}`, { method, headers, body });
  if (!response.ok) throw new Error(`count_tokens answered ${response.status}: ${await response.text()}`);
}
