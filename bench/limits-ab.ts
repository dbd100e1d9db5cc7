/**
 * `node bench/limits-ab.ts [--rounds=12] [--seconds=3] [--redis=URL|none]`: what key limits cost on
 * the chat hot path, measured A/B (docs/performance.md, "The cost of key limits"). One gateway (as
 * `npm run bench` starts it, counters in Redis unless `--redis=none`) serves saturation runs of
 * 50 connections that alternate between a key without limits and a key with every limit set, so
 * that both are measured under the same conditions within seconds of each other; a full bench run
 * measures the two workloads minutes apart, and on a shared machine their difference is then mostly
 * noise. Prints the CPU per request of each round and the median difference.
 */
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startGateway } from './gateway.ts';
import { runClosedLoop } from './load.ts';
import { CORE_LOAD, cpuSeconds, detectPlacement, pinSelf, ProcessGroup, readyLine } from './processes.ts';
import { WORKLOADS } from './workloads.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '12' },
    seconds: { type: 'string', default: '3' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const chat = WORKLOADS.find((workload) => workload.id === 'chat')!;

const placement = detectPlacement(true);
pinSelf(placement);
const group = new ProcessGroup(placement);
try {
  const upstream = group.start({ name: 'upstream simulator', nodeArgs: ['bench/upstream.ts', '--delay-ms=0'], core: CORE_LOAD, cwd: repoRoot });
  const upstreamOrigin = `http://127.0.0.1:${(await readyLine<{ port: number }>(upstream, 30_000)).port}`;
  const gateway = await startGateway(group, {
    repoRoot,
    upstreamOrigin,
    firstGapMs: 10,
    holdMs: 400,
    cpuProfileDir: undefined,
    dataRoot: undefined,
    timeoutMs: 30_000,
    redisUrl: values.redis === 'none' ? undefined : values.redis,
  });
  try {
    /** The gateway's CPU per 2xx answer over one saturation run of `key`. */
    const cpuPerRequest = async (key: string, durationSeconds: number): Promise<number> => {
      const before = cpuSeconds(gateway.child.pid)!;
      const run = await runClosedLoop({ origin: gateway.origin, request: chat.gateway(key) }, { connections: 50, durationSeconds, timeoutMs: 60_000 });
      const after = cpuSeconds(gateway.child.pid)!;
      if (run.non2xx > 0 || run.errors > 0) throw new Error(`${run.non2xx} answers were not 2xx, ${run.errors} errors`);
      return ((after.user + after.system - before.user - before.system) * 1e6) / run.completedInRun;
    };
    // A gateway just started costs more per request for its first seconds of load.
    for (let i = 0; i < 3; i++) for (const key of [gateway.apiKey, gateway.limitedKey]) await cpuPerRequest(key, 2);
    const differences: number[] = [];
    console.log(`counters: ${gateway.limitCounters}; ${rounds} rounds of ${seconds} s per key`);
    for (let round = 0; round < rounds; round++) {
      // Alternate which key goes first, so that a drift of the machine weighs on both alike.
      const order = round % 2 === 0 ? [gateway.apiKey, gateway.limitedKey] : [gateway.limitedKey, gateway.apiKey];
      const measured = new Map<string, number>();
      for (const key of order) measured.set(key, await cpuPerRequest(key, seconds));
      const plain = measured.get(gateway.apiKey)!;
      const limited = measured.get(gateway.limitedKey)!;
      differences.push(limited - plain);
      console.log(`round ${round + 1}: chat ${plain.toFixed(1)} µs, chat-limited ${limited.toFixed(1)} µs, difference ${(limited - plain).toFixed(1)} µs`);
    }
    const sorted = [...differences].sort((a, b) => a - b);
    const median = (sorted[Math.floor((sorted.length - 1) / 2)] + sorted[Math.ceil((sorted.length - 1) / 2)]) / 2;
    const mean = differences.reduce((total, value) => total + value, 0) / differences.length;
    console.log(`cost of limiting: median ${median.toFixed(1)} µs CPU per request, mean ${mean.toFixed(1)} µs`);
  } finally {
    await group.stopAll();
    gateway.cleanup();
  }
} finally {
  await group.stopAll();
}
