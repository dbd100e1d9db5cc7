/**
 * What a streamed answer costs beside a plain one, measured A/B (docs/performance.md, "Streams as
 * cheap as plain answers"): on one gateway, saturation runs of 50 connections alternate between a
 * plain workload and its streamed twin (same dialect, same upstream, the same 20-event answer), so
 * that both are measured within seconds of each other under the same load of the machine. The
 * median of the rounds' ratios of CPU per request is the figure the bar (at most 1.3×) is read on.
 * `node bench/stream-ab.ts [--rounds=8] [--seconds=2] [--pairs=chat,messages]`.
 */
import { parseArgs } from 'node:util';
import { gatewayCpuPerRequest, withStandaloneGateway } from './limits-ab.ts';
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

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { rounds: { type: 'string', default: '8' }, seconds: { type: 'string', default: '2' }, pairs: { type: 'string', default: 'chat,messages' } },
  });
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  const pairs = values.pairs.split(',').map((name) => {
    const pair = PAIRS[name];
    if (pair === undefined) throw new Error(`unknown pair ${name}; known: ${Object.keys(PAIRS).join(', ')}`);
    return pair;
  });
  await withStandaloneGateway(undefined, async (gateway) => {
    const target = { origin: gateway.origin, pid: gateway.child.pid };
    const request = (id: WorkloadId) => WORKLOADS.find((workload) => workload.id === id)!.gateway(gateway.apiKey);
    const cpu = (id: WorkloadId, durationSeconds: number) => gatewayCpuPerRequest(target, request(id), durationSeconds);
    // A gateway just started costs more per request for its first seconds of load.
    for (let i = 0; i < 3; i++) for (const pair of pairs) for (const id of [pair.plain, pair.streamed]) await cpu(id, 1);
    for (const pair of pairs) {
      const ratios: number[] = [];
      for (let round = 0; round < rounds; round++) {
        // Alternate which goes first, so that a drift of the machine weighs on both alike.
        const order = round % 2 === 0 ? [pair.plain, pair.streamed] : [pair.streamed, pair.plain];
        const measured = new Map<WorkloadId, number>();
        for (const id of order) measured.set(id, await cpu(id, seconds));
        const plain = measured.get(pair.plain)!;
        const streamed = measured.get(pair.streamed)!;
        ratios.push(streamed / plain);
        console.log(
          `${pair.streamed} A/B round ${round + 1}: ${pair.plain} ${plain.toFixed(1)} µs, ${pair.streamed} ${streamed.toFixed(1)} µs, ${(streamed / plain).toFixed(2)}×`,
        );
      }
      console.log(`${pair.streamed} over ${pair.plain}: median ${median(ratios).toFixed(2)}× (bar 1.3×)`);
    }
  });
}

await main();
