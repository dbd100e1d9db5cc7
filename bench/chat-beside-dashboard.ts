/**
 * Whether the dashboard slows the request path (`dashboard` in `--only`): one continuous run of chat
 * at a paced rate on the running gateway, cut into slices of a few seconds; in every other slice an
 * operator's dashboard reads loop beside it (the usage page by day, a week by hour broken down by
 * key, and a CSV export, one after another, as fast as the gateway answers them), the order of the
 * two kinds turning each round. Each chat answer counts for the slice its request left in, and the
 * gateway's CPU is read at every slice's edges, so both conditions see the same drift of the machine
 * and the same warm process; on a machine where chat alone varies by tens of percent from one run of
 * a few seconds to the next, separate runs could not resolve 5 %. Compared: chat p99, and the
 * gateway's CPU per chat request (which, with the loop, includes the dashboard's own work in the
 * same process), pooled over all the slices of each kind. Each slice also reads how long the
 * gateway's main thread had work and waited for the CPU: on a shared machine the tails follow that
 * (docs/performance.md, "Where the tails at 500/s come from").
 */
import { runPaced } from './paced.ts';
import { cpuSeconds, runQueueWaitSeconds } from './processes.ts';
import { median, percent, summarize } from './stats.ts';
import { WORKLOADS } from './workloads.ts';

export interface BesideRun {
  readonly p99Ms: number;
  /** The gateway process's CPU per chat request: every thread, the dashboard's reader included. */
  readonly cpuMicrosPerRequest: number;
  /** The main thread's alone: the event loop that serves chat (and renders the dashboard's pages). */
  readonly mainThreadMicrosPerRequest: number;
  /**
   * The share of the time the main thread had work and waited for the CPU (other processes on its
   * core, or the gateway's own other threads): what a stall of the machine looks like from inside.
   */
  readonly mainThreadWaitShare: number;
  readonly failed: number;
}

export interface ChatBesideDashboardResult {
  readonly rate: number;
  /** The length of one slice; a round is one slice of each kind. */
  readonly sliceSeconds: number;
  readonly rounds: readonly { readonly alone: BesideRun; readonly beside: BesideRun; readonly dashboardReads: number }[];
  /** Every slice of a kind taken together (the bar): beside ÷ alone. */
  readonly p99Ratio: number;
  readonly cpuRatio: number;
  readonly mainThreadCpuRatio: number;
  /**
   * Every slice of either kind, split at the median of the main thread's wait for the CPU: whether
   * the tail follows the dashboard or the machine.
   */
  readonly byWait: { readonly quieter: BesideRun; readonly busier: BesideRun };
  /** The medians of the rounds' own ratios, which show the spread the pooled figures smooth. */
  readonly roundMedians: { readonly p99Ratio: number; readonly cpuRatio: number; readonly mainThreadCpuRatio: number };
  /**
   * The tail read so that a stall of the host, which lands in one slice or another, weighs as one
   * slice: the median of the slices' own p99s of each kind, and in how many rounds the slice beside
   * the dashboard had the higher p99 (about half of them when the dashboard moves nothing).
   */
  readonly slicesP99: { readonly aloneMedianMs: number; readonly besideMedianMs: number; readonly besideHigherRounds: number };
}

/** The bar: with the dashboard beside it, chat p99 and CPU per request within 5 % of the run without. */
export const BESIDE_BAR = 1.05;

const chat = WORKLOADS.find((workload) => workload.id === 'chat')!;
const OPERATOR = { email: 'bench-operator@example.invalid', password: 'bench operator passphrase' };

function cookie(response: Response, name: string): string {
  for (const header of response.headers.getSetCookie()) {
    const [pair] = header.split(';');
    const [key, value] = pair!.split('=');
    if (key === name && value) return value;
  }
  throw new Error(`no ${name} cookie in the answer (${response.status})`);
}

/** An operator's session cookie header: the user made with the admin key, signed in through the form. */
export async function operatorSession(origin: string, adminKey: string): Promise<string> {
  const created = await fetch(`${origin}/admin/v1/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...OPERATOR, role: 'operator' }),
  });
  if (!created.ok && created.status !== 409) throw new Error(`creating the operator answered ${created.status}: ${await created.text()}`);
  const form = await fetch(`${origin}/dashboard/sign-in`, { redirect: 'manual' });
  const formCookie = cookie(form, 'gateway_form');
  const signedIn = await fetch(`${origin}/dashboard/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin, cookie: `gateway_form=${formCookie}` },
    body: new URLSearchParams({ _csrf: formCookie, ...OPERATOR, next: '/dashboard' }).toString(),
  });
  return `gateway_session=${cookie(signedIn, 'gateway_session')}`;
}

/** The reads of the loop, in turn: the usage page by day, a week by hour broken down by key, a CSV export. */
export function dashboardPaths(): string[] {
  const week = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
  return ['/dashboard/usage?by=model', `/dashboard/usage?grain=hour&from=${week}&by=key`, '/dashboard/usage.csv?grain=hour&by=status'];
}

export async function dashboardRead(origin: string, session: string, path: string): Promise<void> {
  const response = await fetch(`${origin}${path}`, { headers: { cookie: session } });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`a dashboard read answered ${response.status}`);
}

/** Reads dashboard pages one after another until `stop` resolves; returns how many it read. */
async function dashboardLoop(origin: string, session: string, stop: Promise<void>): Promise<number> {
  const paths = dashboardPaths();
  let stopped = false;
  void stop.then(() => (stopped = true));
  let reads = 0;
  while (!stopped) {
    await dashboardRead(origin, session, paths[reads % paths.length]!);
    reads += 1;
  }
  return reads;
}

/** What one slice saw: its chat answers (by the time their request left) and the gateway's CPU. */
interface Slice {
  readonly beside: boolean;
  readonly startedAt: number;
  endedAt: number;
  readonly latencies: number[];
  failed: number;
  cpuMicros: number;
  mainThreadMicros: number;
  mainThreadWaitMicros: number;
  dashboardReads: number;
}

function cpuMicros(pid: number, tid?: number): number {
  const cpu = cpuSeconds(pid, tid)!;
  return (cpu.user + cpu.system) * 1e6;
}

function waitMicros(pid: number): number {
  return (runQueueWaitSeconds(pid, pid) ?? Number.NaN) * 1e6;
}

function waitShare(slice: Slice): number {
  return slice.mainThreadWaitMicros / ((slice.endedAt - slice.startedAt) * 1000);
}

function runOf(slices: readonly Slice[]): BesideRun {
  const latencies = slices.flatMap((slice) => slice.latencies);
  const answered = Math.max(1, latencies.length);
  const sum = (pick: (slice: Slice) => number) => slices.reduce((total, slice) => total + pick(slice), 0);
  return {
    p99Ms: summarize(latencies)?.p99 ?? Number.NaN,
    cpuMicrosPerRequest: sum((slice) => slice.cpuMicros) / answered,
    mainThreadMicrosPerRequest: sum((slice) => slice.mainThreadMicros) / answered,
    mainThreadWaitShare: sum((slice) => slice.mainThreadWaitMicros) / (sum((slice) => slice.endedAt - slice.startedAt) * 1000),
    failed: sum((slice) => slice.failed),
  };
}

export async function measureChatBesideDashboard(
  gateway: { readonly origin: string; readonly pid: number; readonly apiKey: string; readonly adminKey: string },
  options: { readonly rate: number; readonly sliceSeconds: number; readonly rounds: number },
  log: (line: string) => void,
): Promise<ChatBesideDashboardResult> {
  const session = await operatorSession(gateway.origin, gateway.adminKey);
  const endpoint = { origin: gateway.origin, request: chat.gateway(gateway.apiKey) };
  // The first round warms both paths up (a gateway just started costs more per request for its
  // first seconds) and is not counted.
  const kinds = Array.from({ length: options.rounds + 1 }, (_, round) => (round % 2 === 0 ? [false, true] : [true, false])).flat();
  const slices: Slice[] = [];
  const onAnswer = (sentAt: number, latencyMs: number | null) => {
    // Slices are few: the one the request left in is found from the newest back.
    for (let index = slices.length - 1; index >= 0; index--) {
      const slice = slices[index]!;
      if (sentAt < slice.startedAt) continue;
      if (sentAt >= slice.endedAt) return;
      if (latencyMs === null) slice.failed += 1;
      else slice.latencies.push(latencyMs);
      return;
    }
  };
  // Chat runs until the last slice has ended (a slice outlasts its time by the read it waits for).
  let slicesEnded!: () => void;
  const stop = new Promise<void>((resolve) => (slicesEnded = resolve));
  const chatSeconds = kinds.length * options.sliceSeconds * 10;
  const chatRun = runPaced(endpoint, { rate: options.rate, durationSeconds: chatSeconds, timeoutMs: 60_000, onAnswer, stop });
  for (const beside of kinds) {
    const current: Slice = {
      beside,
      startedAt: performance.now(),
      endedAt: Number.POSITIVE_INFINITY,
      latencies: [],
      failed: 0,
      cpuMicros: -cpuMicros(gateway.pid),
      mainThreadMicros: -cpuMicros(gateway.pid, gateway.pid),
      mainThreadWaitMicros: -waitMicros(gateway.pid),
      dashboardReads: 0,
    };
    slices.push(current);
    const sliced = new Promise<void>((resolve) => setTimeout(resolve, options.sliceSeconds * 1000));
    // A read still under way at the slice's end is waited for and counted in it: the dashboard's
    // work never spills into a slice without it.
    current.dashboardReads = beside ? await dashboardLoop(gateway.origin, session, sliced) : await sliced.then(() => 0);
    current.endedAt = performance.now();
    current.cpuMicros += cpuMicros(gateway.pid);
    current.mainThreadMicros += cpuMicros(gateway.pid, gateway.pid);
    current.mainThreadWaitMicros += waitMicros(gateway.pid);
  }
  slicesEnded();
  await chatRun;
  const counted = slices.slice(2);
  const rounds = [];
  for (let index = 0; index < counted.length; index += 2) {
    const pair = counted.slice(index, index + 2);
    const alone = runOf(pair.filter((slice) => !slice.beside));
    const besideRun = runOf(pair.filter((slice) => slice.beside));
    const dashboardReads = pair.reduce((total, slice) => total + slice.dashboardReads, 0);
    rounds.push({ alone, beside: besideRun, dashboardReads });
    log(
      `chat beside the dashboard, round ${rounds.length}: p99 ${alone.p99Ms.toFixed(2)} → ${besideRun.p99Ms.toFixed(2)} ms, CPU ${alone.cpuMicrosPerRequest.toFixed(0)} → ${besideRun.cpuMicrosPerRequest.toFixed(0)} µs/request (main thread ${alone.mainThreadMicrosPerRequest.toFixed(0)} → ${besideRun.mainThreadMicrosPerRequest.toFixed(0)}), main thread waiting for the CPU ${percent(alone.mainThreadWaitShare)} → ${percent(besideRun.mainThreadWaitShare)} of the time, ${dashboardReads} dashboard reads`,
    );
  }
  const alone = runOf(counted.filter((slice) => !slice.beside));
  const beside = runOf(counted.filter((slice) => slice.beside));
  const byWait = [...counted].sort((a, b) => waitShare(a) - waitShare(b));
  const half = Math.floor(byWait.length / 2);
  return {
    rate: options.rate,
    sliceSeconds: options.sliceSeconds,
    rounds,
    p99Ratio: beside.p99Ms / alone.p99Ms,
    cpuRatio: beside.cpuMicrosPerRequest / alone.cpuMicrosPerRequest,
    mainThreadCpuRatio: beside.mainThreadMicrosPerRequest / alone.mainThreadMicrosPerRequest,
    byWait: { quieter: runOf(byWait.slice(0, half)), busier: runOf(byWait.slice(half)) },
    roundMedians: {
      p99Ratio: median(rounds.map((round) => round.beside.p99Ms / round.alone.p99Ms)),
      cpuRatio: median(rounds.map((round) => round.beside.cpuMicrosPerRequest / round.alone.cpuMicrosPerRequest)),
      mainThreadCpuRatio: median(rounds.map((round) => round.beside.mainThreadMicrosPerRequest / round.alone.mainThreadMicrosPerRequest)),
    },
    slicesP99: {
      aloneMedianMs: median(rounds.map((round) => round.alone.p99Ms)),
      besideMedianMs: median(rounds.map((round) => round.beside.p99Ms)),
      besideHigherRounds: rounds.filter((round) => round.beside.p99Ms > round.alone.p99Ms).length,
    },
  };
}
