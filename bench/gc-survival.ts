/**
 * What a request leaves to the garbage collector, by how many requests are in flight: for each
 * number of connections, saturation runs of the workloads take turns on one gateway, and V8's own
 * record of each collection (`v8.GCProfiler`, run in the gateway through its inspector) gives, per
 * request, the bytes a young-generation collection finds alive and keeps (it copies them, and pays
 * for that), the bytes it promoted to the old generation (which the concurrent marking and the full collections
 * pay for later), and the main thread's pauses. A young collection costs what survives it, not what
 * was allocated, and a request's objects survive one when the request is still in flight: the longer
 * requests stay in flight (more connections, a costlier request), the more of each survives
 * (docs/performance.md, "What a stream leaves to the garbage collector").
 * `node bench/gc-survival.ts [--workloads=chat,chat-stream] [--connections=10,50,100] [--rounds=2] [--seconds=3]`
 */
import { parseArgs } from 'node:util';
import { withInspectedGateway } from './inspector.ts';
import { cpuPerAnswer, runClosedLoop } from './load.ts';
import { type Collections, type GcStatistic, sumCollections } from './gc-statistics.ts';
import { median } from './stats.ts';
import { type Workload, type WorkloadId, workloadOf } from './workloads.ts';

const { values } = parseArgs({
  options: {
    workloads: { type: 'string', default: 'chat,chat-stream' },
    connections: { type: 'string', default: '10,50,100' },
    rounds: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '3' },
  },
});

// Runs in the gateway: `v8.GCProfiler` reports each collection's heap spaces before and after it.
const START = `globalThis.__benchGcProfiler = new (process.getBuiltinModule('node:v8').GCProfiler)(); globalThis.__benchGcProfiler.start(); true`;
const STOP = 'JSON.stringify(globalThis.__benchGcProfiler.stop().statistics)';

const workloads = values.workloads.split(',').map(workloadOf);
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);

await withInspectedGateway({}, async (gateway, session) => {
  const evaluate = async (expression: string) =>
    (await session.send<{ result: { value: unknown } }>('Runtime.evaluate', { expression, returnByValue: true })).result.value;
  const endpoint = (workload: Workload) => ({ origin: gateway.origin, request: workload.gateway(gateway.apiKey) });
  // A gateway just started allocates for its first requests what it then keeps (compiled code, caches).
  for (const workload of workloads) await runClosedLoop(endpoint(workload), { connections: 50, durationSeconds: 2, timeoutMs: 30_000 });
  console.log('per request: CPU µs, young collections per 1,000, KB left alive in the young generation, KB promoted, pauses µs (young / full and incremental)');
  for (const connections of values.connections.split(',').map(Number)) {
    const runs = new Map<WorkloadId, { cpu: number; collections: Collections; requests: number }[]>();
    for (let round = 0; round < rounds; round++) {
      for (const workload of workloads) {
        await evaluate(START);
        const { run, micros: cpu } = await cpuPerAnswer(gateway.child.pid, endpoint(workload), { connections, durationSeconds: seconds, timeoutMs: 60_000 });
        const collections = sumCollections(JSON.parse((await evaluate(STOP)) as string) as GcStatistic[]);
        runs.set(workload.id, [...(runs.get(workload.id) ?? []), { cpu, collections, requests: run.completedInRun }]);
      }
    }
    for (const workload of workloads) {
      const each = runs.get(workload.id)!;
      const per = (read: (run: (typeof each)[number]) => number, scale = 1) => median(each.map((run) => (read(run) * scale) / run.requests));
      const cells = [
        median(each.map((run) => run.cpu)).toFixed(1),
        per((run) => run.collections.scavenges, 1000).toFixed(1),
        per((run) => run.collections.survived, 1 / 1024).toFixed(2),
        per((run) => run.collections.promoted, 1 / 1024).toFixed(2),
        `${per((run) => run.collections.youngPause).toFixed(1)} / ${per((run) => run.collections.fullPause).toFixed(1)}`,
      ];
      console.log(`${String(connections).padStart(4)} connections  ${workload.id.padEnd(16)} ${cells.map((cell) => cell.padStart(10)).join(' ')}`);
    }
  }
});
