/**
 * The race (docs/performance.md, "The race"): four instances on one PostgreSQL schema and one
 * Redis, and RACE_REQUESTS chat requests sent as fast as the machine allows against one account's
 * wallet of 1 USD — two thirds with a key that has a 0.50 USD spend limit and a requests-per-minute
 * limit, a third with a plain key of the same account, so that the key's limits and the wallet are
 * all reached under the same burst. Nothing may be overspent: the wallet never below zero, the
 * key's charges never above its limit, its admitted requests never above what the limit allows
 * over the burst's span. The ledger must be exact to the pico-dollar: credits − charges = balance,
 * nothing held once the load is over, one charge per answered request and of exactly the cost its
 * answer stated, and no other charge. Every refusal must be a clean 402 (`insufficient_quota`) or
 * 429 (the limit's code); any other answer or a transport error is a failure, printed loudly.
 *
 * `npm run bench -- --only=race` runs it; on its own:
 * `node bench/race.ts [--requests=10000] [--concurrency=64] [--rpm=1000] [--database=URL] [--redis=URL]`.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Pool } from 'undici';
import { usdToPicos } from '../src/core/money.ts';
import { admin, type RunningGateway } from './gateway.ts';
import { placeServers } from './placement.ts';
import { CORE_LOAD, detectPlacement, type ProcessGroup, startStandaloneSimulator } from './processes.ts';
import type { RequestSpec } from './request-spec.ts';
import { checkPostgresLedger, DEFAULT_BENCH_DATABASE_URL, startInstance } from './scale-out.ts';
import { WORKLOADS } from './workloads.ts';

export const RACE_REQUESTS = 10_000;
const INSTANCES = 4;
const WALLET_USD = '1';
const SPEND_LIMIT_USD = '0.50';
/** The longest the holds may take to close once the load is over. */
const SETTLE_MS = 30_000;

/** Answers the limited key may get besides 200, and the plain key. */
const CLEAN_REFUSALS: Readonly<Record<'limited' | 'plain', readonly string[]>> = {
  limited: ['402 insufficient_quota', '429 spend_limit_exceeded', '429 requests_per_minute_exceeded'],
  plain: ['402 insufficient_quota'],
};

export interface RaceResult {
  readonly instances: number;
  readonly requests: number;
  readonly concurrency: number;
  readonly seconds: number;
  readonly requestsPerSecond: number;
  /** Where PostgreSQL and Redis ran. */
  readonly placement: string;
  readonly loadAverage: readonly [number, number];
  /** Answers by key, status and error code (`200`, `402 insufficient_quota`, …). */
  readonly outcomes: Readonly<Record<'limited' | 'plain', Readonly<Record<string, number>>>>;
  /** Answers that were not a success nor a clean refusal, and transport errors: a few of them, described. */
  readonly failures: number;
  readonly failureSamples: readonly string[];
  /** Pico-USD, as decimal strings. */
  readonly wallet: { readonly credited: string; readonly charged: string; readonly balance: string; readonly answeredCost: string };
  readonly limitedKey: {
    readonly spendLimit: string;
    readonly charged: string;
    readonly answeredCost: string;
    readonly requestsPerMinute: number;
    /** Requests the per-minute limit let through (every answer but its own 429). */
    readonly admitted: number;
    /** The most it may let through over the span of the burst: the limit at once, then one per 60/N s. */
    readonly allowed: number;
  };
  /** Overspend of each promise: none when all are false. */
  readonly overspent: { readonly wallet: boolean; readonly keySpend: boolean; readonly requestsPerMinute: boolean };
  /** true, or what is wrong with the ledger. */
  readonly ledger: string | true;
}

export interface RaceOptions {
  readonly repoRoot: string;
  readonly upstreamOrigin: string;
  readonly redisUrl: string | undefined;
  readonly databaseUrl: string;
  readonly requests: number;
  readonly concurrency: number;
  readonly requestsPerMinute: number;
  readonly pinned: boolean;
  readonly timeoutMs: number;
}

interface Answer {
  readonly key: 'limited' | 'plain';
  /** `200`, `402 insufficient_quota`, … or `error: …` for a transport failure. */
  readonly outcome: string;
  readonly cost: bigint | null;
  readonly requestId: string | null;
}

export async function measureRace(group: ProcessGroup, options: RaceOptions, log: (line: string) => void): Promise<RaceResult> {
  if (options.redisUrl === undefined) throw new Error('the race needs Redis: the instances share their limit counters there');
  const loadBefore = loadavg()[0];
  const schema = `bench_race_${randomBytes(6).toString('hex')}`;
  const database = new pg.Client({ connectionString: options.databaseUrl });
  await database.connect();
  const servers = await placeServers(database, options.redisUrl, CORE_LOAD, options.pinned);
  log(`race · ${servers.note}`);
  const started: RunningGateway[] = [];
  try {
    await database.query(`CREATE SCHEMA ${schema}`);
    await database.query(`SET search_path TO ${schema}`);
    const url = new URL(options.databaseUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    // One deployment: the instances count the key's limits in the same Redis keys.
    const redisPrefix = `gateway-bench:${schema}:`;
    for (let index = 0; index < INSTANCES; index++) {
      started.push(await startInstance(group, options, { url: url.href, account: started[0], redisPrefix }));
    }
    const [first] = started;
    const post = <T>(path: string, body: unknown) => admin<T>(first.origin, first.adminKey, path, body);
    const account = await post<{ id: string }>('/accounts', { name: 'race' });
    await post(`/accounts/${account.id}/credit`, { amount_usd: WALLET_USD, note: 'race' });
    const limited = await post<{ id: string; key: string }>('/keys', {
      account_id: account.id,
      name: 'race-limited',
      limits: { spend_limit_usd: SPEND_LIMIT_USD, requests_per_minute: options.requestsPerMinute },
    });
    const plain = await post<{ id: string; key: string }>('/keys', { account_id: account.id, name: 'race-plain' });
    const chat = WORKLOADS.find((workload) => workload.id === 'chat')!;
    const requests = { limited: chat.gateway(limited.key), plain: chat.gateway(plain.key) };

    log(`race · ${options.requests} requests, ${options.concurrency} at a time, over ${INSTANCES} instances`);
    const pools = started.map((gateway) => new Pool(gateway.origin, { connections: Math.ceil(options.concurrency / INSTANCES), pipelining: 1 }));
    const answers: Answer[] = [];
    let next = 0;
    let firstLimitedAt = Number.POSITIVE_INFINITY;
    let lastLimitedAt = 0;
    const startedAt = performance.now();
    try {
      await Promise.all(
        Array.from({ length: options.concurrency }, async () => {
          while (next < options.requests) {
            const index = next++;
            // Instances in turn; over each round of them, two of three rounds on the limited key, so
            // that it reaches its spend limit (then its per-minute limit) before the wallet runs dry.
            const key = Math.floor(index / INSTANCES) % 3 === 2 ? 'plain' : 'limited';
            if (key === 'limited') firstLimitedAt = Math.min(firstLimitedAt, performance.now());
            answers.push(await send(pools[index % INSTANCES], requests[key], key));
            // The span runs from the first request sent to the last answered: the instances
            // admitted every request within it, so the limit allows no more than over it.
            if (key === 'limited') lastLimitedAt = performance.now();
          }
        }),
      );
    } finally {
      await Promise.all(pools.map((pool) => pool.destroy()));
    }
    const seconds = (performance.now() - startedAt) / 1000;
    log(`race · sent in ${seconds.toFixed(1)} s; waiting for every hold to close`);

    // Every answer has been read, so every settlement has been decided; the holds' rows close
    // within moments (a commit behind), which is waited for rather than raced.
    const deadline = Date.now() + SETTLE_MS;
    let ledger = await checkPostgresLedger(database, account.id);
    while (ledger !== true && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      ledger = await checkPostgresLedger(database, account.id);
    }
    const totals = (
      await database.query(
        `SELECT
           (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE owner_id = $1 AND kind = 'credit') AS credited,
           (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE owner_id = $1 AND kind = 'charge') AS charged,
           (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE key_id = $2 AND kind = 'charge') AS key_charged,
           (SELECT balance FROM wallets WHERE owner_id = $1) AS balance`,
        [account.id, limited.id],
      )
    ).rows[0];
    const charges = (await database.query(`SELECT request_id, amount FROM ledger_entries WHERE owner_id = $1 AND kind = 'charge'`, [account.id])).rows;
    const credited = BigInt(totals.credited);
    const charged = BigInt(totals.charged);
    const keyCharged = BigInt(totals.key_charged);
    const balance = BigInt(totals.balance);

    const outcomes = { limited: {} as Record<string, number>, plain: {} as Record<string, number> };
    const failureSamples: string[] = [];
    let failures = 0;
    for (const answer of answers) {
      outcomes[answer.key][answer.outcome] = (outcomes[answer.key][answer.outcome] ?? 0) + 1;
      const clean = answer.outcome === '200' ? answer.cost !== null && answer.requestId !== null : CLEAN_REFUSALS[answer.key].includes(answer.outcome);
      if (clean) continue;
      failures += 1;
      if (failureSamples.length < 5) failureSamples.push(`${answer.key} key: ${answer.outcome}`);
    }
    const succeeded = answers.filter((answer) => answer.outcome === '200');
    const costOf = (list: readonly Answer[]) => list.reduce((sum, answer) => sum + (answer.cost ?? 0n), 0n);
    const answeredCost = costOf(succeeded);
    const limitedCost = costOf(succeeded.filter((answer) => answer.key === 'limited'));

    // One charge per answered request, of the cost its answer stated, and no other.
    const chargedById = new Map(charges.map((row) => [row.request_id as string, BigInt(row.amount)]));
    const wrongCharge = succeeded.find((answer) => chargedById.get(answer.requestId!) !== answer.cost);
    if (ledger === true && chargedById.size !== charges.length) ledger = `${charges.length - chargedById.size} requests charged twice`;
    if (ledger === true && charges.length !== succeeded.length) ledger = `${charges.length} charges for ${succeeded.length} answered requests`;
    if (ledger === true && wrongCharge !== undefined) {
      ledger = `request ${wrongCharge.requestId} charged ${chargedById.get(wrongCharge.requestId!) ?? 'nothing'}, its answer stated ${wrongCharge.cost}`;
    }
    if (ledger === true && charged !== answeredCost) ledger = `charged ${charged}, the answers stated ${answeredCost}`;
    if (ledger === true && keyCharged !== limitedCost) ledger = `the limited key charged ${keyCharged}, its answers stated ${limitedCost}`;

    const limitedAnswers = answers.filter((answer) => answer.key === 'limited');
    const admitted = limitedAnswers.filter((answer) => answer.outcome !== '429 requests_per_minute_exceeded').length;
    const spanMs = Math.max(0, lastLimitedAt - firstLimitedAt);
    const allowed = options.requestsPerMinute + Math.floor((spanMs * options.requestsPerMinute) / 60_000);
    const result: RaceResult = {
      instances: INSTANCES,
      requests: answers.length,
      concurrency: options.concurrency,
      seconds,
      requestsPerSecond: answers.length / seconds,
      placement: servers.note,
      loadAverage: [loadBefore, loadavg()[0]],
      outcomes,
      failures,
      failureSamples,
      wallet: { credited: String(credited), charged: String(charged), balance: String(balance), answeredCost: String(answeredCost) },
      limitedKey: {
        spendLimit: String(usdToPicos(SPEND_LIMIT_USD)),
        charged: String(keyCharged),
        answeredCost: String(limitedCost),
        requestsPerMinute: options.requestsPerMinute,
        admitted,
        allowed,
      },
      overspent: {
        wallet: balance < 0n || charged > credited,
        keySpend: keyCharged > usdToPicos(SPEND_LIMIT_USD),
        requestsPerMinute: admitted > allowed,
      },
      ledger,
    };
    log(`race · ${describeRace(result)}`);
    if (failures > 0) log(`race · !!! ${failures} answers were neither a success nor a clean 402 or 429: ${failureSamples.join('; ')}`);
    return result;
  } finally {
    for (const gateway of started) await group.stop(gateway.child);
    for (const gateway of started) gateway.cleanup();
    servers.restore();
    await database.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await database.end();
  }
}

/** One request and what came of it. */
async function send(pool: Pool, request: RequestSpec, key: Answer['key']): Promise<Answer> {
  try {
    const response = await pool.request({ method: request.method, path: request.path, headers: request.headers, body: request.body });
    const text = await response.body.text();
    const header = (name: string) => {
      const value = response.headers[name];
      return typeof value === 'string' ? value : null;
    };
    if (response.statusCode === 200) {
      const cost = header('x-gateway-cost-usd');
      return { key, outcome: '200', cost: cost === null ? null : usdToPicos(cost), requestId: header('x-gateway-request-id') };
    }
    let code = 'no error code';
    try {
      code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? code;
    } catch {
      code = `not JSON: ${text.slice(0, 80)}`;
    }
    return { key, outcome: `${response.statusCode} ${code}`, cost: null, requestId: null };
  } catch (error) {
    return { key, outcome: `error: ${error instanceof Error ? error.message : String(error)}`, cost: null, requestId: null };
  }
}

const usd = (picos: string) => `${(Number(BigInt(picos) / 1000n) / 1e9).toFixed(6)} USD`;

/** The race in one line: outcomes, money, limits. */
export function describeRace(race: RaceResult): string {
  const counts = (key: 'limited' | 'plain') =>
    Object.entries(race.outcomes[key])
      .sort(([, a], [, b]) => b - a)
      .map(([outcome, count]) => `${count} × ${outcome}`)
      .join(', ');
  return (
    `${race.requests} requests in ${race.seconds.toFixed(1)} s (${Math.round(race.requestsPerSecond)}/s); ` +
    `limited key: ${counts('limited')}; plain key: ${counts('plain')}; ` +
    `wallet: ${usd(race.wallet.charged)} charged of ${usd(race.wallet.credited)}, ${usd(race.wallet.balance)} left; ` +
    `key: ${usd(race.limitedKey.charged)} of ${usd(race.limitedKey.spendLimit)}, ${race.limitedKey.admitted} admitted of at most ${race.limitedKey.allowed} ` +
    `(${race.limitedKey.requestsPerMinute}/min); ledger ${race.ledger === true ? 'exact' : race.ledger}`
  );
}

async function main(): Promise<void> {
  const repoRoot = fileURLToPath(new URL('..', import.meta.url));
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: String(RACE_REQUESTS) },
      concurrency: { type: 'string', default: '64' },
      rpm: { type: 'string', default: '1000' },
      database: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? DEFAULT_BENCH_DATABASE_URL },
      redis: { type: 'string', default: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379' },
    },
  });
  const { group, upstreamOrigin } = await startStandaloneSimulator(repoRoot);
  try {
    const result = await measureRace(
      group,
      {
        repoRoot,
        upstreamOrigin,
        redisUrl: values.redis,
        databaseUrl: values.database,
        requests: Number(values.requests),
        concurrency: Number(values.concurrency),
        requestsPerMinute: Number(values.rpm),
        pinned: detectPlacement(true).pinned,
        timeoutMs: 60_000,
      },
      console.error,
    );
    console.log(JSON.stringify(result, null, 2));
    const clean = result.failures === 0 && result.ledger === true && !Object.values(result.overspent).some(Boolean);
    process.exitCode = clean ? 0 : 1;
  } finally {
    await group.stopAll();
  }
}

if (import.meta.main) await main();
