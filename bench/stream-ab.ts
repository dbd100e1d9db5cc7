/**
 * What a streamed answer costs beside a plain one, measured A/B (docs/performance.md, "Streams as
 * cheap as plain answers"): on one gateway, saturation runs of 50 connections alternate between a
 * plain workload and its streamed twin (same dialect, same upstream, the same 20-event answer), so
 * that both are measured within seconds of each other under the same load of the machine. The
 * median of the rounds' ratios of CPU per request is the figure the bar (at most 1.3×) is read on.
 * With `--before`, a gateway of that checkout runs beside this one, and each round measures the
 * pair on both in turn: two builds' ratios from one run, the only comparison a shared machine allows;
 * the report says in how many rounds the second build's ratio was the lower, and the sign test's
 * p-value of that split (bench/stats.ts), which tells a difference of the builds from the machine's.
 * Each round also splits the CPU per request by thread (the main thread; V8's helper threads, where
 * most of the garbage collection's work is done; the rest) and reads the main thread's garbage
 * collection pauses and the bytes it allocated per request from the gateway's /metrics, so that what
 * a stream costs beyond its plain twin can be read by where it went; the medians of each part end
 * the report.
 * `node bench/stream-ab.ts [--rounds=8] [--seconds=2] [--pairs=chat,messages] [--before=<checkout>]`.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { buildsToMeasure, REPO_ROOT } from './builds.ts';
import { readMetrics, startGateway, type RunningGateway } from './gateway.ts';
import { standaloneGatewayOptions } from './limits-ab.ts';
import { runClosedLoop } from './load.ts';
import { cpuSecondsByThread, startStandaloneSimulator } from './processes.ts';
import { WORKLOADS, type WorkloadId } from './workloads.ts';
import { comparePaired, describePaired, median } from './stats.ts';

/** Each plain workload and its streamed twin. */
const PAIRS: Readonly<Record<string, { readonly plain: WorkloadId; readonly streamed: WorkloadId }>> = {
  chat: { plain: 'chat', streamed: 'chat-stream' },
  messages: { plain: 'messages', streamed: 'messages-stream' },
};

/** Where one run's CPU per request went (µs per 2xx answer). */
interface CpuSplit {
  readonly total: number;
  /** Of the total, in the kernel (all threads). */
  readonly kernel: number;
  readonly main: number;
  /** V8's helper threads: garbage collection beside the main thread, and the optimizing compilers. */
  readonly v8Helpers: number;
  readonly other: number;
  /** The main thread's garbage collection pauses (prom-client's `nodejs_gc_duration_seconds`), by kind. */
  readonly gcMinor: number;
  readonly gcMajor: number;
  /** KB allocated on the JavaScript heap per request (the gateway's `nodejs_heap_allocated_bytes_total`). */
  readonly allocatedKb: number;
}

const PARTS = ['total', 'kernel', 'main', 'v8Helpers', 'other', 'gcMinor', 'gcMajor', 'allocatedKb'] as const;
const PART_NAMES: Readonly<Record<(typeof PARTS)[number], string>> = {
  total: 'total',
  kernel: 'of which in the kernel',
  main: 'main thread',
  v8Helpers: 'V8 helper threads',
  other: 'other threads',
  gcMinor: 'main-thread young-generation GC pauses',
  gcMajor: 'main-thread full and incremental GC pauses',
  allocatedKb: 'KB allocated',
};

/**
 * The seconds of garbage collection pauses the gateway's main thread has had, by kind, and the bytes
 * it has allocated on its heap (0 from a build that does not count them).
 */
async function heapReadings(origin: string): Promise<{ readonly minor: number; readonly major: number; readonly allocated: number }> {
  // A build from before `?name=` answers with every metric: the patterns find theirs all the same.
  const text = await readMetrics(origin, ['gateway_nodejs_gc_duration_seconds', 'gateway_nodejs_heap_allocated_bytes_total']);
  const sum = (kinds: readonly string[]) =>
    kinds.reduce((total, kind) => {
      const match = new RegExp(`^gateway_nodejs_gc_duration_seconds_sum\\{kind="${kind}"\\} (\\S+)$`, 'm').exec(text);
      return total + (match === null ? 0 : Number(match[1]));
    }, 0);
  const allocated = /^gateway_nodejs_heap_allocated_bytes_total (\S+)$/m.exec(text);
  return { minor: sum(['minor']), major: sum(['major', 'incremental']), allocated: allocated === null ? 0 : Number(allocated[1]) };
}

/** The gateway's CPU per 2xx answer over one saturation run of 50 connections, split by thread. */
async function cpuPerRequest(gateway: RunningGateway, id: WorkloadId, durationSeconds: number): Promise<CpuSplit> {
  const request = WORKLOADS.find((workload) => workload.id === id)!.gateway(gateway.apiKey);
  const heapBefore = await heapReadings(gateway.origin);
  const before = cpuSecondsByThread(gateway.child.pid)!;
  const run = await runClosedLoop({ origin: gateway.origin, request }, { connections: 50, durationSeconds, timeoutMs: 60_000 });
  const after = cpuSecondsByThread(gateway.child.pid)!;
  const heapAfter = await heapReadings(gateway.origin);
  if (run.non2xx > 0 || run.errors > 0) throw new Error(`${run.non2xx} answers were not 2xx, ${run.errors} errors`);
  const perRequest = (seconds: number) => (seconds * 1e6) / run.completedInRun;
  return {
    total: perRequest(after.total - before.total),
    kernel: perRequest(after.kernel - before.kernel),
    main: perRequest(after.main - before.main),
    v8Helpers: perRequest(after.v8Helpers - before.v8Helpers),
    other: perRequest(after.other - before.other),
    gcMinor: perRequest(heapAfter.minor - heapBefore.minor),
    gcMajor: perRequest(heapAfter.major - heapBefore.major),
    allocatedKb: (heapAfter.allocated - heapBefore.allocated) / 1024 / run.completedInRun,
  };
}

const splitLine = (split: CpuSplit) =>
  `${split.total.toFixed(1)} µs (kernel ${split.kernel.toFixed(0)}; main ${split.main.toFixed(0)}, V8 helpers ${split.v8Helpers.toFixed(0)}, other ${split.other.toFixed(0)}; GC pauses ${split.gcMinor.toFixed(0)} young, ${split.gcMajor.toFixed(0)} full; ${split.allocatedKb.toFixed(0)} KB allocated)`;

/** One measurement of a round: a workload on one build's gateway. */
interface Slot {
  readonly build: string;
  readonly gateway: RunningGateway;
  readonly id: WorkloadId;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '8' },
      seconds: { type: 'string', default: '2' },
      pairs: { type: 'string', default: 'chat,messages' },
      before: { type: 'string' },
    },
  });
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  const pairs = values.pairs.split(',').map((name) => {
    const pair = PAIRS[name];
    if (pair === undefined) throw new Error(`unknown pair ${name}; known: ${Object.keys(PAIRS).join(', ')}`);
    return pair;
  });
  const builds = buildsToMeasure(values.before);
  const { group, upstreamOrigin } = await startStandaloneSimulator(REPO_ROOT);
  const gateways = new Map<string, RunningGateway>();
  try {
    for (const [build, root] of builds) {
      gateways.set(build, await startGateway(group, standaloneGatewayOptions(root, upstreamOrigin, undefined)));
    }
    const cpu = ({ gateway, id }: Slot, durationSeconds: number) => cpuPerRequest(gateway, id, durationSeconds);
    console.log(`load average at start: ${loadavg()[0].toFixed(2)}; ${rounds} rounds of ${seconds} s per build and workload`);
    for (const pair of pairs) {
      const slots: Slot[] = [...gateways].flatMap(([build, gateway]) => [pair.plain, pair.streamed].map((id) => ({ build, gateway, id })));
      // A gateway just started costs more per request for its first seconds of load.
      for (let i = 0; i < 3; i++) for (const slot of slots) await cpu(slot, 1);
      const ratios = new Map<string, number[]>([...gateways.keys()].map((build) => [build, []]));
      const splits = new Map<Slot, CpuSplit[]>(slots.map((slot) => [slot, []]));
      for (let round = 0; round < rounds; round++) {
        // Turn the order every round, so that a drift of the machine weighs on every slot alike.
        for (let i = 0; i < slots.length; i++) {
          const slot = slots[(i + round) % slots.length];
          splits.get(slot)!.push(await cpu(slot, seconds));
        }
        const line: string[] = [];
        for (const build of gateways.keys()) {
          const [plain, streamed] = slots.filter((slot) => slot.build === build).map((slot) => splits.get(slot)!.at(-1)!.total);
          ratios.get(build)!.push(streamed / plain);
          line.push(`${build}: ${pair.plain} ${plain.toFixed(1)} µs, ${pair.streamed} ${streamed.toFixed(1)} µs, ${(streamed / plain).toFixed(2)}×`);
        }
        console.log(`${pair.streamed} A/B round ${round + 1}: ${line.join('; ')}`);
        for (const slot of slots) console.log(`  ${slot.build} ${slot.id}: ${splitLine(splits.get(slot)!.at(-1)!)}`);
      }
      const summary = [...ratios].map(([build, values]) => `${build} median ${median(values).toFixed(2)}×`).join(', ');
      console.log(`${pair.streamed} over ${pair.plain}: ${summary} (bar 1.3×)`);
      if (gateways.size === 2) {
        const [first, second] = [...ratios];
        console.log(`  ${describePaired(comparePaired(first[1], second[1]), { first: first[0], second: second[0] }, (value) => `${value.toFixed(2)}×`)}`);
      }
      // Where the streamed request's extra went: the medians of each part, and their difference.
      for (const build of gateways.keys()) {
        const [plain, streamed] = slots.filter((slot) => slot.build === build).map((slot) => splits.get(slot)!);
        const parts = PARTS.map((part) => {
          const plainMedian = median(plain.map((split) => split[part]));
          const streamedMedian = median(streamed.map((split) => split[part]));
          return `${PART_NAMES[part]} ${plainMedian.toFixed(0)} → ${streamedMedian.toFixed(0)} (${streamedMedian >= plainMedian ? '+' : ''}${(streamedMedian - plainMedian).toFixed(0)})`;
        });
        console.log(`  ${build}, medians µs per request, ${pair.plain} → ${pair.streamed}: ${parts.join('; ')}`);
      }
    }
    console.log(`load average at end: ${loadavg()[0].toFixed(2)}`);
  } finally {
    await group.stopAll();
    for (const gateway of gateways.values()) gateway.cleanup();
  }
}

await main();
