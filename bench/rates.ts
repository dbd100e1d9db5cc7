/**
 * CPU per request at paced rates, below saturation: the bare proxy and the gateway, each pinned to
 * the core under test, take turns at each rate (bench/paced.ts), and each one's CPU over the run is
 * divided by the requests it answered, the whole process's and its main thread's (the event loop).
 * On a virtual machine a process that sleeps between requests can pay several times per request
 * what it pays at saturation (docs/performance.md, "CPU per request below saturation"); the
 * latency bars at 500/s read against that, and against the share of the time the main thread had
 * work and waited for the CPU (other processes on its core): the stalls of a shared machine.
 *
 * `node bench/rates.ts [--rates=100,250,500,1000] [--seconds=5] [--workload=chat]`
 */
import { parseArgs } from 'node:util';
import { withStandaloneGateway } from './limits-ab.ts';
import { percent } from './stats.ts';
import { runPaced } from './paced.ts';
import { CORE_UNDER_TEST, cpuSeconds, readyLine, runQueueWaitSeconds } from './processes.ts';
import { WORKLOADS } from './workloads.ts';

const { values } = parseArgs({
  options: {
    rates: { type: 'string', default: '100,250,500,1000' },
    seconds: { type: 'string', default: '5' },
    workload: { type: 'string', default: 'chat' },
  },
});
const workload = WORKLOADS.find((candidate) => candidate.id === values.workload);
if (workload === undefined) throw new Error(`unknown workload ${values.workload}`);
const seconds = Number(values.seconds);

await withStandaloneGateway(undefined, async (gateway, { group, upstreamOrigin, repoRoot }) => {
  const bare = group.start({ name: 'bare proxy', nodeArgs: ['bench/bare-proxy.ts', `--upstream=${upstreamOrigin}`], core: CORE_UNDER_TEST, cwd: repoRoot });
  const targets = [
    { name: 'bare proxy', pid: bare.pid, origin: `http://127.0.0.1:${(await readyLine<{ port: number }>(bare, 30_000)).port}`, request: workload.upstream },
    { name: 'gateway', pid: gateway.child.pid, origin: gateway.origin, request: workload.gateway(gateway.apiKey) },
  ];
  // Both warm first: a process just started costs more per request for its first seconds.
  for (const target of targets) await runPaced(target, { rate: 500, durationSeconds: 3, timeoutMs: 60_000 });
  for (const rate of values.rates.split(',').map(Number)) {
    for (const target of targets) {
      const [before, mainBefore, waitBefore] = [cpuSeconds(target.pid)!, cpuSeconds(target.pid, target.pid)!, runQueueWaitSeconds(target.pid, target.pid)];
      const startedAt = performance.now();
      const result = await runPaced(target, { rate, durationSeconds: seconds, timeoutMs: 60_000 });
      const [after, mainAfter, waitAfter] = [cpuSeconds(target.pid)!, cpuSeconds(target.pid, target.pid)!, runQueueWaitSeconds(target.pid, target.pid)];
      const waited =
        waitBefore === null || waitAfter === null
          ? ''
          : `, main thread waiting for the CPU ${percent(((waitAfter - waitBefore) * 1000) / (performance.now() - startedAt))} of the time`;
      const perRequest = (from: typeof before, to: typeof after) => ((to.user + to.system - from.user - from.system) * 1e6) / Math.max(1, result.completed);
      console.log(
        `${values.workload} at ${rate}/s · ${target.name}: CPU ${perRequest(before, after).toFixed(0)} µs per request (main thread ${perRequest(mainBefore, mainAfter).toFixed(0)}), p50 ${result.latency?.p50.toFixed(2)} ms, p99 ${result.latency?.p99.toFixed(2)} ms${waited}, ${result.failed} failed`,
      );
    }
  }
});
