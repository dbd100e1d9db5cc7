/**
 * What key limits cost on the chat hot path, measured A/B (docs/performance.md, "The cost of key
 * limits"): saturation runs of 50 connections on one gateway that alternate between a key without
 * limits and a key with every limit set, so that both are measured under the same conditions
 * within seconds of each other (a whole bench run measures the two workloads minutes apart, and on
 * a shared machine their difference is then mostly noise). The median difference of the rounds'
 * CPU per request is the cost. `npm run bench` runs it (`limits` in `--only`); on its own:
 * `node bench/limits-ab.ts [--rounds=12] [--seconds=3] [--redis=URL|none]`.
 */
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { type GatewayStartOptions, startGateway, type RunningGateway } from './gateway.ts';
import { cpuPerAnswer } from './load.ts';
import { type ProcessGroup, startStandaloneSimulator } from './processes.ts';
import type { RequestSpec } from './request-spec.ts';
import { WORKLOADS } from './workloads.ts';

export interface LimitsAbResult {
  /** Where the limited key's counters were: Redis, or the gateway's process. */
  readonly counters: 'redis' | 'memory';
  readonly seconds: number;
  /** Gateway CPU per request of each round, µs. */
  readonly rounds: readonly { readonly plain: number; readonly limited: number }[];
  /** Median and mean of the rounds' differences (limited − plain), µs. */
  readonly medianMicros: number;
  readonly meanMicros: number;
}

export interface LimitsAbTarget {
  readonly origin: string;
  readonly pid: number;
  readonly apiKey: string;
  readonly limitedKey: string;
  readonly limitCounters: 'redis' | 'memory';
}

const chat = WORKLOADS.find((workload) => workload.id === 'chat')!;

export async function measureLimitsAb(
  gateway: LimitsAbTarget,
  options: { readonly rounds: number; readonly seconds: number },
  log: (line: string) => void,
): Promise<LimitsAbResult> {
  const cpuPerRequest = (key: string, durationSeconds: number) => gatewayCpuPerRequest(gateway, chat.gateway(key), durationSeconds);
  // A gateway just started costs more per request for its first seconds of load.
  for (let i = 0; i < 3; i++) for (const key of [gateway.apiKey, gateway.limitedKey]) await cpuPerRequest(key, 2);
  const rounds: { plain: number; limited: number }[] = [];
  for (let round = 0; round < options.rounds; round++) {
    // Alternate which key goes first, so that a drift of the machine weighs on both alike.
    const order = round % 2 === 0 ? [gateway.apiKey, gateway.limitedKey] : [gateway.limitedKey, gateway.apiKey];
    const measured = new Map<string, number>();
    for (const key of order) measured.set(key, await cpuPerRequest(key, options.seconds));
    const plain = measured.get(gateway.apiKey)!;
    const limited = measured.get(gateway.limitedKey)!;
    rounds.push({ plain, limited });
    log(`limits A/B round ${round + 1}: chat ${plain.toFixed(1)} µs, chat-limited ${limited.toFixed(1)} µs, difference ${(limited - plain).toFixed(1)} µs`);
  }
  const differences = rounds.map((round) => round.limited - round.plain).sort((a, b) => a - b);
  const middle = (differences.length - 1) / 2;
  return {
    counters: gateway.limitCounters,
    seconds: options.seconds,
    rounds,
    medianMicros: (differences[Math.floor(middle)] + differences[Math.ceil(middle)]) / 2,
    meanMicros: differences.reduce((total, value) => total + value, 0) / differences.length,
  };
}

/** The gateway's CPU per 2xx answer (µs) over one saturation run of 50 connections sending `request`. */
export async function gatewayCpuPerRequest(
  gateway: { readonly origin: string; readonly pid: number },
  request: RequestSpec,
  durationSeconds: number,
): Promise<number> {
  return (await cpuPerAnswer(gateway.pid, { origin: gateway.origin, request }, { connections: 50, durationSeconds, timeoutMs: 60_000 })).micros;
}

/** How the A/B benches run a gateway of the checkout at `repoRoot`: the simulator's usual answer, no profile, a data dir of its own. */
export function standaloneGatewayOptions(repoRoot: string, upstreamOrigin: string, redisUrl: string | undefined): GatewayStartOptions {
  return { repoRoot, upstreamOrigin, firstGapMs: 10, holdMs: 400, cpuProfileDir: undefined, dataRoot: undefined, timeoutMs: 30_000, redisUrl };
}

/**
 * Runs `measure` against a gateway of the benchmark's catalog in front of a simulator of its own (and
 * tells it the group and the simulator, for processes of its own beside them),
 * both stopped after (the A/B measurements run on their own, outside `npm run bench`).
 */
export async function withStandaloneGateway<T>(
  redisUrl: string | undefined,
  measure: (gateway: RunningGateway, beside: { readonly group: ProcessGroup; readonly upstreamOrigin: string; readonly repoRoot: string }) => Promise<T>,
  options: Pick<Partial<GatewayStartOptions>, 'holdMs' | 'extraNodeArgs'> = {},
): Promise<T> {
  const repoRoot = fileURLToPath(new URL('..', import.meta.url));
  const { group, upstreamOrigin } = await startStandaloneSimulator(repoRoot);
  try {
    const gateway = await startGateway(group, { ...standaloneGatewayOptions(repoRoot, upstreamOrigin, redisUrl), ...options });
    try {
      return await measure(gateway, { group, upstreamOrigin, repoRoot });
    } finally {
      await group.stopAll();
      gateway.cleanup();
    }
  } finally {
    await group.stopAll();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '12' },
      seconds: { type: 'string', default: '3' },
      redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
    },
  });
  await withStandaloneGateway(values.redis === 'none' ? undefined : values.redis, async (gateway) => {
    const rounds = Number(values.rounds);
    const seconds = Number(values.seconds);
    console.log(`counters: ${gateway.limitCounters}; ${rounds} rounds of ${seconds} s per key`);
    const result = await measureLimitsAb({ ...gateway, pid: gateway.child.pid }, { rounds, seconds }, console.log);
    console.log(`cost of limiting: median ${result.medianMicros.toFixed(1)} µs CPU per request, mean ${result.meanMicros.toFixed(1)} µs`);
  });
}

if (import.meta.main) await main();
