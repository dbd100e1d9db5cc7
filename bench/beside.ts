/**
 * Chat beside the dashboard on its own (the same measurement `npm run bench -- --only=dashboard`
 * makes on the bench's gateway, bench/chat-beside-dashboard.ts), on a fresh gateway of its own and
 * with longer runs when asked:
 * `node bench/beside.ts [--rounds=12] [--slice-seconds=3] [--rate=500]`.
 */
import { parseArgs } from 'node:util';
import { BESIDE_BAR, type BesideRun, measureChatBesideDashboard } from './chat-beside-dashboard.ts';
import { withStandaloneGateway } from './limits-ab.ts';
import { percent } from './stats.ts';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '12' }, 'slice-seconds': { type: 'string', default: '3' }, rate: { type: 'string', default: '500' } },
});
const measured = await withStandaloneGateway(undefined, (gateway) =>
  measureChatBesideDashboard(
    { origin: gateway.origin, pid: gateway.child.pid, apiKey: gateway.apiKey, adminKey: gateway.adminKey },
    { rate: Number(values.rate), sliceSeconds: Number(values['slice-seconds']), rounds: Number(values.rounds) },
    console.log,
  ),
);
const verdict = (ratio: number) => `× ${ratio.toFixed(3)} (${ratio <= BESIDE_BAR ? 'met' : 'not met'})`;
console.log(
  `beside ÷ alone over all slices: chat p99 ${verdict(measured.p99Ratio)}, CPU per request ${verdict(measured.cpuRatio)}, main thread ${verdict(measured.mainThreadCpuRatio)}`,
);
const medians = measured.roundMedians;
const reads = measured.rounds.map((round) => round.dashboardReads);
console.log(
  `medians of the rounds' own ratios: chat p99 × ${medians.p99Ratio.toFixed(3)}, CPU per request × ${medians.cpuRatio.toFixed(3)}, main thread × ${medians.mainThreadCpuRatio.toFixed(3)}; dashboard reads per slice ${Math.min(...reads)}–${Math.max(...reads)}`,
);
const { aloneMedianMs, besideMedianMs, besideHigherRounds } = measured.slicesP99;
console.log(
  `the slices' own p99s: median ${aloneMedianMs.toFixed(2)} ms alone, ${besideMedianMs.toFixed(2)} ms beside (× ${(besideMedianMs / aloneMedianMs).toFixed(3)}); beside higher in ${besideHigherRounds} of ${measured.rounds.length} rounds`,
);
const { quieter, busier } = measured.byWait;
const waited = (run: BesideRun) => `p99 ${run.p99Ms.toFixed(2)} ms (main thread waiting for the CPU ${percent(run.mainThreadWaitShare)} of the time)`;
console.log(`all slices by the main thread's wait for the CPU: the quieter half ${waited(quieter)}, the busier half ${waited(busier)}`);
