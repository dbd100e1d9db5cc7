/**
 * Whether the dashboard slows the request path (`dashboard` in `--only`): rounds of chat at a paced
 * rate on the running gateway, each measured once alone and once with an operator's dashboard reads
 * looping beside it (the usage page by day, a week by hour broken down by key, and a CSV export, one
 * after another, as fast as they answer), in alternating order so that a drift of the machine weighs
 * on both alike. Compared: chat p99, and the gateway's CPU per chat request (which, with the loop,
 * includes the dashboard's own work in the same process).
 */
import { runPaced } from './paced.ts';
import { cpuSeconds } from './processes.ts';
import { WORKLOADS } from './workloads.ts';

export interface BesideRun {
  readonly p99Ms: number;
  /** The gateway process's CPU per chat request: every thread, the dashboard's reader included. */
  readonly cpuMicrosPerRequest: number;
  /** The main thread's alone: the event loop that serves chat (and renders the dashboard's pages). */
  readonly mainThreadMicrosPerRequest: number;
  readonly failed: number;
}

export interface ChatBesideDashboardResult {
  readonly rate: number;
  readonly seconds: number;
  readonly rounds: readonly { readonly alone: BesideRun; readonly beside: BesideRun; readonly dashboardReads: number }[];
  /** Medians over the rounds of beside ÷ alone. */
  readonly p99Ratio: number;
  readonly cpuRatio: number;
  readonly mainThreadCpuRatio: number;
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
async function operatorSession(origin: string, adminKey: string): Promise<string> {
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

/** Reads dashboard pages one after another until `stop` resolves; returns how many it read. */
async function dashboardLoop(origin: string, session: string, stop: Promise<void>): Promise<number> {
  const week = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
  const paths = ['/dashboard/usage?by=model', `/dashboard/usage?grain=hour&from=${week}&by=key`, '/dashboard/usage.csv?grain=hour&by=status'];
  let stopped = false;
  void stop.then(() => (stopped = true));
  let reads = 0;
  while (!stopped) {
    const response = await fetch(`${origin}${paths[reads % paths.length]}`, { headers: { cookie: session } });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`a dashboard read answered ${response.status}`);
    reads += 1;
  }
  return reads;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = (sorted.length - 1) / 2;
  return (sorted[Math.floor(middle)]! + sorted[Math.ceil(middle)]!) / 2;
}

export async function measureChatBesideDashboard(
  gateway: { readonly origin: string; readonly pid: number; readonly apiKey: string; readonly adminKey: string },
  options: { readonly rate: number; readonly seconds: number; readonly rounds: number },
  log: (line: string) => void,
): Promise<ChatBesideDashboardResult> {
  const session = await operatorSession(gateway.origin, gateway.adminKey);
  const endpoint = { origin: gateway.origin, request: chat.gateway(gateway.apiKey) };
  const paced = async (): Promise<BesideRun> => {
    const before = cpuSeconds(gateway.pid)!;
    const mainBefore = cpuSeconds(gateway.pid, gateway.pid)!;
    const result = await runPaced(endpoint, { rate: options.rate, durationSeconds: options.seconds, timeoutMs: options.seconds * 1000 + 15_000 });
    const after = cpuSeconds(gateway.pid)!;
    const mainAfter = cpuSeconds(gateway.pid, gateway.pid)!;
    const perRequest = (from: typeof before, to: typeof after) => ((to.user + to.system - from.user - from.system) * 1e6) / Math.max(1, result.completed);
    return {
      p99Ms: result.latency?.p99 ?? Number.NaN,
      cpuMicrosPerRequest: perRequest(before, after),
      mainThreadMicrosPerRequest: perRequest(mainBefore, mainAfter),
      failed: result.failed,
    };
  };
  const beside = async (): Promise<{ run: BesideRun; reads: number }> => {
    let end!: () => void;
    const stop = new Promise<void>((resolve) => (end = resolve));
    const loop = dashboardLoop(gateway.origin, session, stop);
    const run = await paced().finally(end);
    return { run, reads: await loop };
  };
  // Warm both paths up first: a gateway just started costs more per request for its first seconds.
  await paced();
  await beside();
  const rounds: { alone: BesideRun; beside: BesideRun; dashboardReads: number }[] = [];
  for (let round = 0; round < options.rounds; round++) {
    let alone: BesideRun;
    let withDashboard: { run: BesideRun; reads: number };
    if (round % 2 === 0) {
      alone = await paced();
      withDashboard = await beside();
    } else {
      withDashboard = await beside();
      alone = await paced();
    }
    rounds.push({ alone, beside: withDashboard.run, dashboardReads: withDashboard.reads });
    log(
      `chat beside the dashboard, round ${round + 1}: p99 ${alone.p99Ms.toFixed(2)} → ${withDashboard.run.p99Ms.toFixed(2)} ms, CPU ${alone.cpuMicrosPerRequest.toFixed(0)} → ${withDashboard.run.cpuMicrosPerRequest.toFixed(0)} µs/request (main thread ${alone.mainThreadMicrosPerRequest.toFixed(0)} → ${withDashboard.run.mainThreadMicrosPerRequest.toFixed(0)}), ${withDashboard.reads} dashboard reads`,
    );
  }
  return {
    rate: options.rate,
    seconds: options.seconds,
    rounds,
    p99Ratio: median(rounds.map((round) => round.beside.p99Ms / round.alone.p99Ms)),
    cpuRatio: median(rounds.map((round) => round.beside.cpuMicrosPerRequest / round.alone.cpuMicrosPerRequest)),
    mainThreadCpuRatio: median(rounds.map((round) => round.beside.mainThreadMicrosPerRequest / round.alone.mainThreadMicrosPerRequest)),
  };
}
