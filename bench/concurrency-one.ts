/**
 * What one request costs when it is the only one in flight, against its cost at saturation: the
 * bare proxy and the gateway in turn, each round one run of a single connection and one of 50, with
 * the process's CPU per answered request (all its threads) and the median latency. At concurrency 1
 * the latency is mostly the request's own CPU, and the work that saturation shares between requests
 * (a group commit, a wakeup of the event loop, a write) is paid by each one alone.
 * `node bench/concurrency-one.ts [--workload=chat] [--rounds=3] [--seconds=3]`
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from './builds.ts';
import { startGateway } from './gateway.ts';
import { cpuPerAnswer, runClosedLoop } from './load.ts';
import { CORE_UNDER_TEST, readyLine, startStandaloneSimulator } from './processes.ts';
import type { RequestSpec } from './request-spec.ts';
import { workloadOf } from './workloads.ts';

const { values } = parseArgs({
  options: { workload: { type: 'string', default: 'chat' }, rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '3' } },
});
const workload = workloadOf(values.workload);
const seconds = Number(values.seconds);

/** CPU µs per answered request of the process `pid` over one closed-loop run, and the run's p50 (ms). */
async function measure(origin: string, pid: number, request: RequestSpec, connections: number): Promise<string> {
  const { run, micros } = await cpuPerAnswer(pid, { origin, request }, { connections, durationSeconds: seconds, timeoutMs: 60_000 });
  return `c=${connections} ${micros.toFixed(0)} µs, p50 ${run.latency?.p50.toFixed(3)} ms`;
}

const { group, upstreamOrigin } = await startStandaloneSimulator(REPO_ROOT);
try {
  const bare = group.start({ name: 'bare proxy', nodeArgs: ['bench/bare-proxy.ts', `--upstream=${upstreamOrigin}`], core: CORE_UNDER_TEST, cwd: REPO_ROOT });
  const bareOrigin = `http://127.0.0.1:${(await readyLine<{ port: number }>(bare, 30_000)).port}`;
  const gateway = await startGateway(group, {
    repoRoot: REPO_ROOT,
    upstreamOrigin,
    firstGapMs: 10,
    holdMs: 400,
    cpuProfileDir: undefined,
    dataRoot: undefined,
    timeoutMs: 30_000,
    redisUrl: undefined,
  });
  const contenders = [
    { name: 'bare proxy', origin: bareOrigin, pid: bare.pid, request: workload.upstream },
    { name: 'gateway', origin: gateway.origin, pid: gateway.child.pid, request: workload.gateway(gateway.apiKey) },
  ];
  console.log(`load average at start: ${loadavg()[0].toFixed(2)}; ${workload.id}, CPU per request of the process (all threads)`);
  // A process just started costs more per request for its first seconds of load.
  for (const { origin, request } of contenders) await runClosedLoop({ origin, request }, { connections: 50, durationSeconds: 3, timeoutMs: 60_000 });
  for (let round = 1; round <= Number(values.rounds); round++) {
    const line: string[] = [];
    for (const { name, origin, pid, request } of contenders) {
      line.push(`${name}: ${await measure(origin, pid, request, 1)}, ${await measure(origin, pid, request, 50)}`);
    }
    console.log(`round ${round}: ${line.join('; ')}`);
  }
  console.log(`load average at end: ${loadavg()[0].toFixed(2)}`);
} finally {
  await group.stopAll();
}
