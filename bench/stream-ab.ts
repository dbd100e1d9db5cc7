/**
 * What a streamed answer costs beside a plain one, measured A/B (docs/performance.md, "Streams as
 * cheap as plain answers"): on one gateway, saturation runs of 50 connections alternate between a
 * plain workload and its streamed twin (same dialect, same upstream, the same 20-event answer), so
 * that both are measured within seconds of each other under the same load of the machine. The
 * median of the rounds' ratios of CPU per request is the figure the bar (at most 1.3×) is read on.
 * With `--before`, a gateway of that checkout runs beside this one, and each round measures the
 * pair on both in turn: two builds' ratios from one run, the only comparison a shared machine allows.
 * `node bench/stream-ab.ts [--rounds=8] [--seconds=2] [--pairs=chat,messages] [--before=<checkout>]`.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startGateway, type RunningGateway } from './gateway.ts';
import { gatewayCpuPerRequest, standaloneGatewayOptions } from './limits-ab.ts';
import { startStandaloneSimulator } from './processes.ts';
import { WORKLOADS, type WorkloadId } from './workloads.ts';

/** Each plain workload and its streamed twin. */
const PAIRS: Readonly<Record<string, { readonly plain: WorkloadId; readonly streamed: WorkloadId }>> = {
  chat: { plain: 'chat', streamed: 'chat-stream' },
  messages: { plain: 'messages', streamed: 'messages-stream' },
};

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = (sorted.length - 1) / 2;
  return (sorted[Math.floor(middle)] + sorted[Math.ceil(middle)]) / 2;
};

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
  const repoRoot = fileURLToPath(new URL('..', import.meta.url));
  const builds: [string, string][] =
    values.before === undefined
      ? [['this build', repoRoot]]
      : [
          ['before', values.before],
          ['after', repoRoot],
        ];
  const { group, upstreamOrigin } = await startStandaloneSimulator(repoRoot);
  const gateways = new Map<string, RunningGateway>();
  try {
    for (const [build, root] of builds) {
      gateways.set(build, await startGateway(group, standaloneGatewayOptions(root, upstreamOrigin, undefined)));
    }
    const cpu = ({ gateway, id }: Slot, durationSeconds: number) =>
      gatewayCpuPerRequest(
        { origin: gateway.origin, pid: gateway.child.pid },
        WORKLOADS.find((workload) => workload.id === id)!.gateway(gateway.apiKey),
        durationSeconds,
      );
    console.log(`load average at start: ${loadavg()[0].toFixed(2)}; ${rounds} rounds of ${seconds} s per build and workload`);
    for (const pair of pairs) {
      const slots: Slot[] = [...gateways].flatMap(([build, gateway]) => [pair.plain, pair.streamed].map((id) => ({ build, gateway, id })));
      // A gateway just started costs more per request for its first seconds of load.
      for (let i = 0; i < 3; i++) for (const slot of slots) await cpu(slot, 1);
      const ratios = new Map<string, number[]>([...gateways.keys()].map((build) => [build, []]));
      for (let round = 0; round < rounds; round++) {
        // Turn the order every round, so that a drift of the machine weighs on every slot alike.
        const measured = new Map<Slot, number>();
        for (let i = 0; i < slots.length; i++) {
          const slot = slots[(i + round) % slots.length];
          measured.set(slot, await cpu(slot, seconds));
        }
        const line: string[] = [];
        for (const build of gateways.keys()) {
          const [plain, streamed] = slots.filter((slot) => slot.build === build).map((slot) => measured.get(slot)!);
          ratios.get(build)!.push(streamed / plain);
          line.push(`${build}: ${pair.plain} ${plain.toFixed(1)} µs, ${pair.streamed} ${streamed.toFixed(1)} µs, ${(streamed / plain).toFixed(2)}×`);
        }
        console.log(`${pair.streamed} A/B round ${round + 1}: ${line.join('; ')}`);
      }
      const summary = [...ratios].map(([build, values]) => `${build} median ${median(values).toFixed(2)}×`).join(', ');
      console.log(`${pair.streamed} over ${pair.plain}: ${summary} (bar 1.3×)`);
    }
    console.log(`load average at end: ${loadavg()[0].toFixed(2)}`);
  } finally {
    await group.stopAll();
    for (const gateway of gateways.values()) gateway.cleanup();
  }
}

await main();
