/**
 * Where a request's allocations are made, by the bytes each site allocates per request: the
 * gateway runs with its inspector on a loopback port, and V8's sampling heap profiler, told to keep
 * the samples of objects the garbage collector has since freed, samples the heap every
 * `--interval` bytes allocated while a workload runs at saturation. Garbage collection is most of
 * what a streamed request costs beyond a plain one (docs/performance.md, "Streams as cheap as plain
 * answers"), and it follows what is allocated, so this says where to cut. With `--survivors`, the
 * samples of objects a young collection freed are dropped: what is left was promoted to the old
 * generation (or allocated there), the bytes that bring on its full collections.
 * `node bench/allocations.ts [--workloads=chat,chat-stream] [--seconds=3] [--interval=4096] [--top=25]
 * [--connections=8] [--survivors]`
 */
import { parseArgs } from 'node:util';
import { withInspectedGateway } from './inspector.ts';
import { runClosedLoop } from './load.ts';
import { workloadOf } from './workloads.ts';

interface SamplingNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly SamplingNode[];
}

const { values } = parseArgs({
  options: {
    workloads: { type: 'string', default: 'chat,chat-stream' },
    seconds: { type: 'string', default: '3' },
    interval: { type: 'string', default: '4096' },
    top: { type: 'string', default: '25' },
    survivors: { type: 'boolean', default: false },
    connections: { type: 'string', default: '8' },
  },
});

const place = (node: SamplingNode) => {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*?\/(src|bench)\//, '$1/');
  return `${functionName || '(anonymous)'} ${file || '(native)'}:${lineNumber + 1}`;
};

/** Bytes by the allocating function, and by the nearest function of ours (src/) up its stack. */
function sitesOf(head: SamplingNode): { bySite: Map<string, number>; byOurs: Map<string, number>; total: number } {
  const bySite = new Map<string, number>();
  const byOurs = new Map<string, number>();
  let total = 0;
  const walk = (node: SamplingNode, ours: string) => {
    const here = node.callFrame.url.includes('/src/') ? place(node) : ours;
    if (node.selfSize > 0) {
      total += node.selfSize;
      bySite.set(place(node), (bySite.get(place(node)) ?? 0) + node.selfSize);
      byOurs.set(here, (byOurs.get(here) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(head, '(outside src/)');
  return { bySite, byOurs, total };
}

await withInspectedGateway({}, async (gateway, session) => {
  await session.send('HeapProfiler.enable');
  for (const id of values.workloads.split(',')) {
    const workload = workloadOf(id);
    const endpoint = { origin: gateway.origin, request: workload.gateway(gateway.apiKey) };
    // A gateway just started allocates for its first requests what it then keeps (compiled code, caches).
    await runClosedLoop(endpoint, { connections: 8, durationSeconds: 2, timeoutMs: 30_000 });
    await session.send('HeapProfiler.startSampling', {
      samplingInterval: Number(values.interval),
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: !values.survivors,
    });
    const run = await runClosedLoop(endpoint, { connections: Number(values.connections), durationSeconds: Number(values.seconds), timeoutMs: 30_000 });
    const { profile } = await session.send<{ profile: { head: SamplingNode } }>('HeapProfiler.stopSampling');
    const requests = run.completedInRun;
    const { bySite, byOurs, total } = sitesOf(profile.head);
    const kb = (bytes: number) => (bytes / requests / 1024).toFixed(2).padStart(7);
    console.log(`\n${id}: ${requests} requests, ${kb(total).trim()} KB sampled per request`);
    const top = (sites: Map<string, number>, title: string) => {
      console.log(`  ${title} (KB per request)`);
      for (const [site, bytes] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) console.log(`  ${kb(bytes)}  ${site}`);
    };
    top(byOurs, 'by the nearest function of ours up the stack');
    top(bySite, 'by the allocating function');
  }
});
