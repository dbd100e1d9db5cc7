/**
 * Two builds of the gateway measured A/B against the bare proxy (docs/performance.md, "Images at
 * the cost of their bytes"): one simulator, one bare proxy and a gateway of each build, started
 * side by side, and saturation runs of 50 connections that take turns between the three, each
 * workload in rounds whose order turns, so that a drift of a shared machine weighs on all of them
 * alike. The gateway's CPU per request (user + system from /proc, all its threads) is read against
 * the bare proxy's of the same round; medians over the rounds. With `--rate=N`, the runs are paced
 * at N requests per second instead (bench/paced.ts), and each round also gives each contender's p99.
 * With two builds, the report also says in how many rounds the build after cost less than the build
 * before, and the sign test's p-value of that split (bench/stats.ts).
 *
 * `node bench/builds-ab.ts --before=<checkout of the other build> [--only=images,chat]
 * [--rounds=6] [--seconds=3] [--rate=N] [--cpu-prof=DIR]`; `--cpu-prof` profiles this checkout's
 * gateway. Without `--before`, only this checkout's gateway and the bare proxy.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { buildsToMeasure, REPO_ROOT } from './builds.ts';
import { startGateway, type RunningGateway } from './gateway.ts';
import { runClosedLoop } from './load.ts';
import { runPaced } from './paced.ts';
import { CORE_UNDER_TEST, cpuSeconds, readyLine, startStandaloneSimulator } from './processes.ts';
import type { RequestSpec } from './request-spec.ts';
import { type Workload, workloadOf } from './workloads.ts';
import { comparePaired, describePaired, median } from './stats.ts';

interface Contender {
  readonly name: string;
  readonly origin: string;
  readonly pid: number;
  request(workload: Workload): RequestSpec;
}

/** What one run of a contender gave: CPU per 2xx answer (µs), throughput, and the p99 (ms) of a paced run. */
interface RunFigures {
  readonly cpu: number;
  readonly rps: number;
  readonly p99: number | null;
}

/** A saturation run of 50 connections, or, given a rate, a run paced at it. */
async function measure(contender: Contender, workload: Workload, seconds: number, rate: number | undefined): Promise<RunFigures> {
  const endpoint = { origin: contender.origin, request: contender.request(workload) };
  const before = cpuSeconds(contender.pid)!;
  const run =
    rate === undefined
      ? await runClosedLoop(endpoint, { connections: 50, durationSeconds: seconds, timeoutMs: 60_000 })
      : await runPaced(endpoint, { rate, durationSeconds: seconds, timeoutMs: 60_000 });
  const after = cpuSeconds(contender.pid)!;
  const [answered, failed] = 'non2xx' in run ? [run.completedInRun, run.non2xx + run.errors] : [run.completed, run.failed];
  if (failed > 0) throw new Error(`${contender.name} · ${workload.id}: ${failed} requests failed or were not answered with a 2xx`);
  return {
    cpu: ((after.user + after.system - before.user - before.system) * 1e6) / answered,
    rps: 'non2xx' in run ? run.requestsPerSecond : run.achievedRate,
    p99: 'non2xx' in run ? null : (run.latency?.p99 ?? null),
  };
}

function gatewayContender(name: string, gateway: RunningGateway): Contender {
  return { name, origin: gateway.origin, pid: gateway.child.pid, request: (workload) => workload.gateway(gateway.apiKey) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      before: { type: 'string' },
      only: { type: 'string', default: 'images,chat' },
      rounds: { type: 'string', default: '6' },
      seconds: { type: 'string', default: '3' },
      rate: { type: 'string' },
      'cpu-prof': { type: 'string' },
    },
  });
  const workloads = values.only.split(',').map(workloadOf);
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  const rate = values.rate === undefined ? undefined : Number(values.rate);
  const { group, upstreamOrigin } = await startStandaloneSimulator(REPO_ROOT);
  const gateways: RunningGateway[] = [];
  try {
    const bare = group.start({ name: 'bare proxy', nodeArgs: ['bench/bare-proxy.ts', `--upstream=${upstreamOrigin}`], core: CORE_UNDER_TEST, cwd: REPO_ROOT });
    const bareOrigin = `http://127.0.0.1:${(await readyLine<{ port: number }>(bare, 30_000)).port}`;
    const contenders: Contender[] = [{ name: 'bare', origin: bareOrigin, pid: bare.pid, request: (workload) => workload.upstream }];
    for (const [name, root] of buildsToMeasure(values.before, 'after')) {
      const gateway = await startGateway(group, {
        repoRoot: root,
        upstreamOrigin,
        firstGapMs: 10,
        holdMs: 400,
        cpuProfileDir: name === 'after' ? values['cpu-prof'] : undefined,
        dataRoot: undefined,
        timeoutMs: 30_000,
        redisUrl: undefined,
      });
      gateways.push(gateway);
      contenders.push(gatewayContender(name, gateway));
    }
    const pace = rate === undefined ? '' : `, paced at ${rate}/s`;
    console.log(`load average at start: ${loadavg()[0].toFixed(2)}; ${rounds} rounds of ${seconds} s per contender and workload${pace}`);
    // A process just started costs more per request for its first seconds of load.
    for (const contender of contenders) for (let i = 0; i < 3; i++) for (const workload of workloads) await measure(contender, workload, 1, undefined);
    for (const workload of workloads) {
      const figures = new Map<string, RunFigures[]>(contenders.map((contender) => [contender.name, []]));
      for (let round = 0; round < rounds; round++) {
        const order = contenders.map((_, index) => contenders[(index + round) % contenders.length]);
        for (const contender of order) figures.get(contender.name)!.push(await measure(contender, workload, seconds, rate));
        const bare = figures.get('bare')!.at(-1)!;
        const line = contenders.map((contender) => {
          const { cpu, p99 } = figures.get(contender.name)!.at(-1)!;
          const times = contender.name === 'bare' ? '' : ` (${(cpu / bare.cpu).toFixed(2)}×)`;
          return `${contender.name} ${cpu.toFixed(1)} µs${times}${p99 === null ? '' : `, p99 ${p99.toFixed(1)} ms`}`;
        });
        console.log(`${workload.id} round ${round + 1}: ${line.join(', ')}`);
      }
      const bareCpu = figures.get('bare')!.map((run) => run.cpu);
      const summary = contenders.map((contender) => {
        const runs = figures.get(contender.name)!;
        const cpu = runs.map((run) => run.cpu);
        const ratios = contender.name === 'bare' ? '' : `, median ratio to bare ${median(cpu.map((value, index) => value / bareCpu[index])).toFixed(2)}×`;
        const p99s = runs.flatMap((run) => (run.p99 === null ? [] : [run.p99]));
        const p99 = p99s.length === 0 ? '' : `, median p99 ${median(p99s).toFixed(1)} ms`;
        return `${contender.name} median ${median(cpu).toFixed(1)} µs${ratios}, ${median(runs.map((run) => run.rps)).toFixed(0)} req/s${p99}`;
      });
      console.log(`${workload.id}: ${summary.join('; ')}`);
      const before = figures.get('before');
      const after = figures.get('after');
      if (before !== undefined && after !== undefined) {
        const cpu = (runs: readonly RunFigures[]) => runs.map((run) => run.cpu);
        console.log(`  ${describePaired(comparePaired(cpu(before), cpu(after)), { first: 'before', second: 'after' }, (value) => `${value.toFixed(1)} µs`)}`);
      }
    }
    console.log(`load average at end: ${loadavg()[0].toFixed(2)}`);
  } finally {
    await group.stopAll();
    for (const gateway of gateways) gateway.cleanup();
  }
}

if (import.meta.main) await main();
