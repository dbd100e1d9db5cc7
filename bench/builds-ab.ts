/**
 * Two builds of the gateway measured A/B against the bare proxy (docs/performance.md, "Images at
 * the cost of their bytes"): one simulator, one bare proxy and a gateway of each build, started
 * side by side, and saturation runs of 50 connections that take turns between the three, each
 * workload in rounds whose order turns, so that a drift of a shared machine weighs on all of them
 * alike. The gateway's CPU per request (user + system from /proc, all its threads) is read against
 * the bare proxy's of the same round; medians over the rounds.
 *
 * `node bench/builds-ab.ts --before=<checkout of the other build> [--only=images,chat]
 * [--rounds=6] [--seconds=3] [--cpu-prof=DIR]`; `--cpu-prof` profiles this checkout's gateway. Without `--before`, only this checkout's gateway and the bare proxy.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { buildsToMeasure, REPO_ROOT } from './builds.ts';
import { startGateway, type RunningGateway } from './gateway.ts';
import { runClosedLoop } from './load.ts';
import { CORE_UNDER_TEST, cpuSeconds, readyLine, startStandaloneSimulator } from './processes.ts';
import type { RequestSpec } from './request-spec.ts';
import { type Workload, workloadOf } from './workloads.ts';
import { median } from './stats.ts';

interface Contender {
  readonly name: string;
  readonly origin: string;
  readonly pid: number;
  request(workload: Workload): RequestSpec;
}

/** The CPU per 2xx answer (µs) of one saturation run, and its throughput. */
async function saturate(contender: Contender, workload: Workload, seconds: number): Promise<{ readonly cpu: number; readonly rps: number }> {
  const before = cpuSeconds(contender.pid)!;
  const run = await runClosedLoop(
    { origin: contender.origin, request: contender.request(workload) },
    { connections: 50, durationSeconds: seconds, timeoutMs: 60_000 },
  );
  const after = cpuSeconds(contender.pid)!;
  if (run.non2xx > 0 || run.errors > 0) throw new Error(`${contender.name} · ${workload.id}: ${run.non2xx} answers were not 2xx, ${run.errors} errors`);
  return { cpu: ((after.user + after.system - before.user - before.system) * 1e6) / run.completedInRun, rps: run.requestsPerSecond };
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
      'cpu-prof': { type: 'string' },
    },
  });
  const workloads = values.only.split(',').map(workloadOf);
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
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
    console.log(`load average at start: ${loadavg()[0].toFixed(2)}; ${rounds} rounds of ${seconds} s per contender and workload`);
    // A process just started costs more per request for its first seconds of load.
    for (const contender of contenders) for (let i = 0; i < 3; i++) for (const workload of workloads) await saturate(contender, workload, 1);
    for (const workload of workloads) {
      const figures = new Map<string, { cpu: number[]; rps: number[] }>(contenders.map((contender) => [contender.name, { cpu: [], rps: [] }]));
      for (let round = 0; round < rounds; round++) {
        const order = contenders.map((_, index) => contenders[(index + round) % contenders.length]);
        const line: string[] = [];
        for (const contender of order) {
          const { cpu, rps } = await saturate(contender, workload, seconds);
          figures.get(contender.name)!.cpu.push(cpu);
          figures.get(contender.name)!.rps.push(rps);
        }
        for (const contender of contenders) {
          const cpu = figures.get(contender.name)!.cpu.at(-1)!;
          line.push(`${contender.name} ${cpu.toFixed(1)} µs${contender.name === 'bare' ? '' : ` (${(cpu / figures.get('bare')!.cpu.at(-1)!).toFixed(2)}×)`}`);
        }
        console.log(`${workload.id} round ${round + 1}: ${line.join(', ')}`);
      }
      const bareCpu = figures.get('bare')!.cpu;
      const summary = contenders.map((contender) => {
        const { cpu, rps } = figures.get(contender.name)!;
        const ratios = contender.name === 'bare' ? '' : `, median ratio to bare ${median(cpu.map((value, index) => value / bareCpu[index])).toFixed(2)}×`;
        return `${contender.name} median ${median(cpu).toFixed(1)} µs${ratios}, ${median(rps).toFixed(0)} req/s`;
      });
      console.log(`${workload.id}: ${summary.join('; ')}`);
    }
    console.log(`load average at end: ${loadavg()[0].toFixed(2)}`);
  } finally {
    await group.stopAll();
    for (const gateway of gateways) gateway.cleanup();
  }
}

if (import.meta.main) await main();
