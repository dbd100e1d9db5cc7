/**
 * `npm run bench`: the performance benchmark of the gateway (see docs/performance.md).
 *
 * Starts, on loopback only, the upstream simulator, the bare pass-through proxy (the practical
 * limit of a Node gateway), the gateway itself on its embedded store with auth and billing on, and
 * the Portkey gateway when it happens to be installed; then runs every workload against the
 * upstream directly, through the bare proxy and through the gateway, in the same run, so that each
 * figure is read against baselines measured under the same conditions. Prints a table and writes
 * bench/results/latest.json. Every process it starts is stopped at the end, even on failure.
 */
import { connect } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem, type as osType } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gatewayMissing, loadTokenizer, probeWorkload, startGateway, type RunningGateway } from './gateway.ts';
import { measureJobs, RESPONSE_JOB_ROUTES, VIDEO_JOB_ROUTES, type JobRoutes, type JobsResult } from './jobs.ts';
import { measureLimitsAb, type LimitsAbResult } from './limits-ab.ts';
import { measureLongOperations, type LongOperationsResult } from './long-operations.ts';
import { runClosedLoop } from './load.ts';
import { parseOptions, type BenchOptions } from './options.ts';
import { DEFAULT_BENCH_DATABASE_URL, measureScaleOut, SCALE_WORKLOADS, type ScaleOutResult } from './scale-out.ts';
import { measureRace, RACE_REQUESTS, type RaceResult } from './race.ts';
import { measureDashboardLists } from './dashboard-lists.ts';
import { measureDashboardUsage } from './dashboard-usage.ts';
import { measureChatBesideDashboard, type ChatBesideDashboardResult } from './chat-beside-dashboard.ts';
import { runPaced } from './paced.ts';
import { findPortkey, startPortkey } from './portkey.ts';
import {
  CORE_LOAD,
  CORE_UNDER_TEST,
  cpuSeconds,
  detectPlacement,
  MemoryWatch,
  pinSelf,
  ProcessGroup,
  readyLine,
  residentBytes,
  type Child,
} from './processes.ts';
import { checkBars, formatReport } from './report.ts';
import type { Endpoint, RequestSpec } from './request-spec.ts';
import type { BenchResults, Measured, TargetFigures, TargetName, WorkloadResult } from './results.ts';
import { runConcurrentStreams, type ConcurrentStreamsResult } from './streams.ts';
import { measureTtfb, type TtfbResult } from './ttfb.ts';
import { firstByteStream, GATEWAY_MODELS, heldStream, WORKLOADS, type PacedStream, type Workload } from './workloads.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const START_TIMEOUT_MS = 30_000;
/** Removal of temporary directories, run after every process has stopped. */
const cleanups: (() => void)[] = [];

/** A process in front of the simulator (or the simulator itself, for `direct`). */
interface Target {
  readonly name: TargetName;
  readonly origin: string;
  /** The process to watch for memory; undefined for `direct` (the simulator is not under test). */
  readonly child?: Child;
}

interface Services {
  readonly upstreamOrigin: string;
  readonly direct: Target;
  readonly bare: Target;
  readonly gateway:
    | (Target & { readonly apiKey: string; readonly limitedKey: string; readonly limitCounters: 'redis' | 'memory'; readonly adminKey: string })
    | undefined;
  readonly gatewaySkipped: string | undefined;
  readonly portkey: Target | undefined;
}

const progress = (line: string) => process.stderr.write(`${line}\n`);

async function attempt<T>(work: () => Promise<T>): Promise<Measured<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message.split('\n')[0] : String(error) };
  }
}

/** A measurement of a process that has died would only time out: say so at once. */
function alive(target: Target): void {
  const exitCode = target.child?.process.exitCode;
  if (exitCode !== null && exitCode !== undefined) throw new Error(`${target.name} exited with code ${exitCode}`);
}

function requestFor(target: Target, workload: Workload, services: Services): RequestSpec | undefined {
  switch (target.name) {
    case 'direct':
    case 'bare-proxy':
      return workload.upstream;
    case 'gateway':
      return services.gateway ? workload.gateway(keyFor(workload, services.gateway)) : undefined;
    case 'portkey':
      return workload.portkey?.(services.upstreamOrigin);
    default: {
      const unreachable: never = target.name;
      throw new Error(`unknown target ${String(unreachable)}`);
    }
  }
}

/** The URL when a TCP connection to its host and port opens within a second; undefined otherwise. */
function reachableRedis(url: string): Promise<string | undefined> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379), timeout: 1_000 });
    const done = (reachable: boolean) => {
      socket.destroy();
      resolve(reachable ? url : undefined);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

function keyFor(workload: Workload, gateway: { readonly apiKey: string; readonly limitedKey: string }): string {
  return workload.key === 'limited' ? gateway.limitedKey : gateway.apiKey;
}

async function runWorkload(workload: Workload, services: Services, options: BenchOptions): Promise<WorkloadResult> {
  const { durations } = options;
  const skipped: WorkloadResult['skipped'] = {};
  const targets: Target[] = [services.direct, services.bare];
  if (services.gateway === undefined) skipped.gateway = services.gatewaySkipped ?? 'not started';
  else {
    const availability = await attempt(() => probeWorkload(services.gateway!.origin, keyFor(workload, services.gateway!), workload));
    if (!availability.ok) skipped.gateway = `probe failed: ${availability.error}`;
    else if (!availability.value.available) skipped.gateway = availability.value.reason;
    else targets.push(services.gateway);
  }
  if (services.portkey !== undefined && workload.portkey !== undefined) targets.push(services.portkey);

  const endpoints = new Map<TargetName, Endpoint>(
    targets.map((target) => [target.name, { origin: target.origin, request: requestFor(target, workload, services)! }]),
  );
  const watches = new Map(targets.flatMap((target) => (target.child ? [[target.name, new MemoryWatch(target.child.pid)] as const] : [])));
  const figures = new Map<TargetName, { -readonly [K in keyof TargetFigures]: TargetFigures[K] }>(targets.map((target) => [target.name, {}]));
  const closedLoopTimeout = (seconds: number) => seconds * 1000 + 15_000;

  // One phase at a time across the targets, so that each comparison is made minutes apart at most.
  for (const target of targets) {
    const endpoint = endpoints.get(target.name)!;
    const entry = figures.get(target.name)!;
    entry.saturation = await attempt(async () => {
      alive(target);
      await runClosedLoop(endpoint, {
        connections: options.saturationConnections,
        durationSeconds: durations.warmupSeconds,
        timeoutMs: closedLoopTimeout(durations.warmupSeconds),
      });
      const cpuBefore = target.child ? cpuSeconds(target.child.pid) : null;
      const startedAt = performance.now();
      const result = await runClosedLoop(endpoint, {
        connections: options.saturationConnections,
        durationSeconds: durations.saturationSeconds,
        timeoutMs: closedLoopTimeout(durations.saturationSeconds),
      });
      const cpuAfter = target.child ? cpuSeconds(target.child.pid) : null;
      if (cpuBefore !== null && cpuAfter !== null && result.completedInRun > 0) {
        const system = cpuAfter.system - cpuBefore.system;
        const used = cpuAfter.user - cpuBefore.user + system;
        entry.saturationCpu = {
          microsPerRequest: (used * 1e6) / result.completedInRun,
          utilization: used / ((performance.now() - startedAt) / 1000),
          systemShare: used > 0 ? system / used : 0,
        };
      }
      return result;
    });
    const saturation = entry.saturation;
    progress(`${workload.id} · saturation · ${target.name}: ${saturation?.ok ? `${Math.round(saturation.value.requestsPerSecond)} req/s` : saturation?.error}`);
  }
  for (const target of targets) {
    const endpoint = endpoints.get(target.name)!;
    figures.get(target.name)!.concurrencyOne = await attempt(async () => {
      alive(target);
      return runClosedLoop(endpoint, {
        connections: 1,
        durationSeconds: durations.concurrencyOneSeconds,
        timeoutMs: closedLoopTimeout(durations.concurrencyOneSeconds),
      });
    });
  }
  for (const target of targets) {
    const endpoint = endpoints.get(target.name)!;
    figures.get(target.name)!.paced = await attempt(async () => {
      alive(target);
      return runPaced(endpoint, { rate: options.pacedRate, durationSeconds: durations.pacedSeconds, timeoutMs: 15_000 });
    });
  }
  for (const [name, watch] of watches) figures.get(name)!.peakRssBytes = watch.stop();
  progress(`${workload.id} · latency phases done`);
  return { id: workload.id, title: workload.title, skipped, targets: Object.fromEntries(figures) };
}

/**
 * Before anything is measured, each process under test serves the selected workloads in turn for
 * `startWarmupSeconds` in all (each at least once). A gateway just started costs more CPU per
 * request over its first seconds of load than a few seconds later: without this the run's first
 * workload paid for it alone, its 1-second warm-up being too short, and read about a fifth dearer
 * than the same work measured after it (docs/performance.md, "The responses workload").
 */
async function warmUp(services: Services, options: BenchOptions): Promise<void> {
  const { durations } = options;
  const selected = WORKLOADS.filter((workload) => options.workloads.includes(workload.id));
  for (const target of [services.bare, services.gateway, services.portkey]) {
    if (target === undefined) continue;
    const outcome = await attempt(async () => {
      const requests: RequestSpec[] = [];
      for (const workload of selected) {
        // A workload the gateway does not serve is reported by its own probe later; it warms nothing.
        if (target === services.gateway) {
          const apiKey = services.gateway.apiKey;
          const available = await probeWorkload(target.origin, apiKey, workload).then(
            (availability) => availability.available,
            () => false,
          );
          if (!available) continue;
        }
        const request = requestFor(target, workload, services);
        if (request !== undefined) requests.push(request);
      }
      const slices = requests.length === 0 ? 0 : Math.max(requests.length, Math.ceil(durations.startWarmupSeconds / durations.warmupSeconds));
      for (let slice = 0; slice < slices; slice += 1) {
        alive(target);
        await runClosedLoop(
          { origin: target.origin, request: requests[slice % requests.length] },
          { connections: options.saturationConnections, durationSeconds: durations.warmupSeconds, timeoutMs: durations.warmupSeconds * 1000 + 15_000 },
        );
      }
      return { slices, workloads: requests.length };
    });
    progress(
      `warm-up · ${target.name}: ${outcome.ok ? `${outcome.value.slices} × ${durations.warmupSeconds} s over ${outcome.value.workloads} workloads` : outcome.error}`,
    );
  }
}

/** The gateway and peer endpoints of a paced stream, for the targets that serve streaming chat. */
function pacedEndpoints(
  stream: PacedStream,
  services: Services,
  gatewayStreams: boolean,
  upstreamPrefix: string,
): { endpoints: Map<TargetName, { target: Target; endpoint: Endpoint }>; skipped: Partial<Record<TargetName, string>> } {
  const endpoints = new Map<TargetName, { target: Target; endpoint: Endpoint }>();
  const skipped: Partial<Record<TargetName, string>> = {};
  endpoints.set('direct', { target: services.direct, endpoint: { origin: services.direct.origin, request: stream.upstream } });
  endpoints.set('bare-proxy', { target: services.bare, endpoint: { origin: services.bare.origin, request: stream.upstream } });
  if (services.gateway !== undefined && gatewayStreams) {
    endpoints.set('gateway', { target: services.gateway, endpoint: { origin: services.gateway.origin, request: stream.gateway(services.gateway.apiKey) } });
  } else skipped.gateway = services.gatewaySkipped ?? 'streaming chat is not available';
  const portkeyChat = WORKLOADS.find((workload) => workload.id === 'chat-stream')?.portkey;
  if (services.portkey !== undefined && portkeyChat !== undefined) {
    endpoints.set('portkey', {
      target: services.portkey,
      endpoint: { origin: services.portkey.origin, request: portkeyChat(services.upstreamOrigin + upstreamPrefix) },
    });
  }
  return { endpoints, skipped };
}

/** The paced stream tests need the gateway's streaming chat: known from the chat-stream workload, or probed. */
async function gatewayServesStreams(services: Services, measured: readonly WorkloadResult[]): Promise<boolean> {
  const gateway = services.gateway;
  if (gateway === undefined) return false;
  const chatStream = measured.find((workload) => workload.id === 'chat-stream');
  if (chatStream !== undefined) return chatStream.skipped.gateway === undefined;
  const workload = WORKLOADS.find((candidate) => candidate.id === 'chat-stream')!;
  const probe = await attempt(() => probeWorkload(gateway.origin, gateway.apiKey, workload));
  return probe.ok && probe.value.available;
}

async function runTtfb(services: Services, options: BenchOptions, gatewayStreams: boolean): Promise<BenchResults['ttfb']> {
  const gap = options.durations.firstGapMs;
  const { endpoints, skipped } = pacedEndpoints(firstByteStream(gap), services, gatewayStreams, `/first/${gap}`);
  const targets: Partial<Record<TargetName, Measured<TtfbResult>>> = {};
  for (const [name, { target, endpoint }] of endpoints) {
    targets[name] = await attempt(async () => {
      alive(target);
      return measureTtfb(endpoint, { requests: options.durations.ttfbRequests, warmup: options.durations.ttfbWarmup, timeoutMs: 60_000 });
    });
    const measured = targets[name];
    progress(`ttfb · ${name}: ${measured?.ok ? `p50 ${measured.value.firstByte?.p50.toFixed(3)} ms` : measured?.error}`);
  }
  return { skipped, targets };
}

/**
 * The many open streams, each target on a process of its own started for the test: the memory of a
 * process that served the other workloads first holds what they left (a larger heap, the allocator's
 * arenas), which is not what its open streams cost.
 */
async function runStreams(group: ProcessGroup, services: Services, options: BenchOptions, gatewayStreams: boolean): Promise<BenchResults['concurrentStreams']> {
  const hold = options.durations.holdMs;
  const fresh = await freshTargets(group, services, options);
  try {
    const { endpoints, skipped } = pacedEndpoints(heldStream(hold), fresh, gatewayStreams, `/hold/${hold}`);
    endpoints.delete('direct');
    const targets: Partial<Record<TargetName, Measured<ConcurrentStreamsResult>>> = {};
    for (const [name, { target, endpoint }] of endpoints) {
      targets[name] = await attempt(async () => {
        alive(target);
        // The bar is the gateway's memory with its tokenizer loaded (loaded on first use: a count of
        // tokens loads it), as a gateway that serves count_tokens or long prompts carries it.
        if (name === 'gateway') await loadTokenizer(fresh.gateway!);
        // Each stream has 23 events `hold` apart; the rest is time to open 1,000 connections.
        return runConcurrentStreams(endpoint, { streams: options.concurrentStreams, pid: target.child!.pid, timeoutMs: hold * 40 + 30_000 });
      });
      const measured = targets[name];
      progress(
        `streams · ${name}: ${measured?.ok ? `${measured.value.completed}/${measured.value.streams} completed, peak ${((measured.value.peakRssBytes ?? 0) / 2 ** 20).toFixed(1)} MB` : measured?.error}`,
      );
    }
    return { skipped, targets };
  } finally {
    // Only what this test started: a target whose fresh start failed is the running one, kept.
    if (fresh.bare !== services.bare && fresh.bare.child) await group.stop(fresh.bare.child);
    if (fresh.gateway !== services.gateway && fresh.gateway?.child) await group.stop(fresh.gateway.child);
  }
}

/** The services with a bare proxy and a gateway just started in place of the running ones (those kept where a start fails). */
async function freshTargets(group: ProcessGroup, services: Services, options: BenchOptions): Promise<Services> {
  const bare = await attempt(() => startBareProxy(group, services.upstreamOrigin));
  const gateway =
    services.gateway === undefined
      ? undefined
      : await attempt(async () => {
          const running = await startGatewayBeside(group, services, options);
          return { ...services.gateway!, origin: running.origin, child: running.child, apiKey: running.apiKey };
        });
  if (!bare.ok) progress(`streams · a fresh bare proxy did not start (${bare.error}); the running one is measured`);
  if (gateway?.ok === false) progress(`streams · a fresh gateway did not start (${gateway.error}); the running one is measured`);
  return {
    ...services,
    bare: bare.ok ? bare.value : services.bare,
    gateway: gateway?.ok ? gateway.value : services.gateway,
  };
}

/** A gateway of its own for one part of the run (a fresh store; no profile, no Redis), beside the main one. */
async function startGatewayBeside(group: ProcessGroup, services: Services, options: BenchOptions): Promise<RunningGateway> {
  const gateway = await startGateway(group, {
    repoRoot,
    upstreamOrigin: services.upstreamOrigin,
    firstGapMs: options.durations.firstGapMs,
    holdMs: options.durations.holdMs,
    cpuProfileDir: undefined,
    dataRoot: options.dataRoot,
    timeoutMs: START_TIMEOUT_MS,
    redisUrl: undefined,
  });
  cleanups.push(gateway.cleanup);
  return gateway;
}

async function startBareProxy(group: ProcessGroup, upstreamOrigin: string): Promise<Target> {
  const child = group.start({
    name: 'bare proxy',
    nodeArgs: ['bench/bare-proxy.ts', `--upstream=${upstreamOrigin}`],
    core: CORE_UNDER_TEST,
    cwd: repoRoot,
  });
  const origin = `http://127.0.0.1:${(await readyLine<{ port: number }>(child, START_TIMEOUT_MS)).port}`;
  return { name: 'bare-proxy', origin, child };
}

/** A background response of the bench's chat model; its input varies so that no two jobs are alike. */
function backgroundBody(index: number): string {
  return JSON.stringify({ model: GATEWAY_MODELS.chat, input: `Background job ${index}: say hello.`, max_output_tokens: 64, background: true });
}

/** A video job of the bench's video model (a 4-second clip of the built-in simulated provider); prompts vary. */
function videoBody(index: number): string {
  return JSON.stringify({ model: GATEWAY_MODELS.video, prompt: `Video job ${index}: a paper boat on a pond.`, duration: 4 });
}

/** Key limits A/B on the one gateway: alternating saturation runs of a plain and a limited key. */
async function runLimitsAb(services: Services, options: BenchOptions): Promise<Measured<LimitsAbResult>> {
  const gateway = services.gateway;
  if (gateway === undefined) return { ok: false, error: services.gatewaySkipped ?? 'the gateway is not running' };
  const measured = await attempt(async () => {
    alive(gateway);
    return measureLimitsAb({ ...gateway, pid: gateway.child!.pid }, { rounds: options.quick ? 4 : 20, seconds: options.quick ? 1 : 3 }, progress);
  });
  progress(
    `limits A/B · gateway: ${measured.ok ? `median ${measured.value.medianMicros.toFixed(1)} µs CPU per request (${measured.value.counters})` : measured.error}`,
  );
  return measured;
}

async function runChatBesideDashboard(services: Services, options: BenchOptions): Promise<Measured<ChatBesideDashboardResult>> {
  const gateway = services.gateway;
  if (gateway === undefined) return { ok: false, error: services.gatewaySkipped ?? 'the gateway is not running' };
  return attempt(async () => {
    alive(gateway);
    return measureChatBesideDashboard(
      { ...gateway, pid: gateway.child!.pid },
      { rate: options.pacedRate, sliceSeconds: options.quick ? 1 : 3, rounds: options.quick ? 2 : 12 },
      progress,
    );
  });
}

/**
 * The scale-out path: PostgreSQL (BENCH_DATABASE_URL, default the local test database; a schema of
 * its own) and Redis, one and two instances, against the embedded store, in gateways of its own
 * beside the main one (bench/scale-out.ts).
 */
async function runScaleOut(group: ProcessGroup, services: Services, options: BenchOptions): Promise<Measured<ScaleOutResult>> {
  const measured = await attempt(async () => {
    const redisUrl = await reachableRedis(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379');
    return measureScaleOut(
      group,
      {
        repoRoot,
        upstreamOrigin: services.upstreamOrigin,
        redisUrl,
        databaseUrl: process.env.BENCH_DATABASE_URL ?? DEFAULT_BENCH_DATABASE_URL,
        workloads: SCALE_WORKLOADS,
        // A few seconds per set-up and workload; `node bench/scale-out.ts` takes longer runs.
        rounds: options.quick ? 1 : 2,
        seconds: options.quick ? 1 : 3,
        pacedSeconds: options.quick ? 1 : 3,
        pacedRate: options.pacedRate,
        pinned: detectPlacement(options.pin).pinned,
        timeoutMs: START_TIMEOUT_MS,
      },
      () => loadavg()[0],
      progress,
    );
  });
  if (!measured.ok) progress(`scale-out: ${measured.error}`);
  return measured;
}

/** The race: four instances on PostgreSQL + Redis for one 1 USD wallet and one key's limits, in gateways of its own. */
async function runRace(group: ProcessGroup, services: Services, options: BenchOptions): Promise<Measured<RaceResult>> {
  const measured = await attempt(async () =>
    measureRace(
      group,
      {
        repoRoot,
        upstreamOrigin: services.upstreamOrigin,
        redisUrl: await reachableRedis(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'),
        databaseUrl: process.env.BENCH_DATABASE_URL ?? DEFAULT_BENCH_DATABASE_URL,
        requests: options.quick ? 2_000 : RACE_REQUESTS,
        concurrency: 64,
        requestsPerMinute: 1_000,
        pinned: detectPlacement(options.pin).pinned,
        timeoutMs: START_TIMEOUT_MS,
      },
      progress,
    ),
  );
  if (!measured.ok) progress(`race: ${measured.error}`);
  return measured;
}

async function runJobs(services: Services, routes: JobRoutes, body: (index: number) => string, jobs: number): Promise<Measured<JobsResult>> {
  const gateway = services.gateway;
  if (gateway === undefined) return { ok: false, error: services.gatewaySkipped ?? 'the gateway is not running' };
  const measured = await attempt(async () => {
    alive(gateway);
    return measureJobs({ ...gateway, pid: gateway.child?.pid }, routes, body, { jobs, submitters: 8, timeoutMs: 180_000 });
  });
  const figures = (value: JobsResult) =>
    `${Math.round(value.submittedPerSecond)} submitted/s, ${Math.round(value.completedPerSecond)} completed/s, ${Math.round(value.cpuMicrosPerJob ?? Number.NaN)} µs CPU per job`;
  progress(`${routes.kind} jobs · gateway: ${measured.ok ? figures(measured.value) : measured.error}`);
  return measured;
}

/**
 * Video generations of a real minute in flight beside background responses, on a gateway of its
 * own (fresh store, default job slots) started beside the main one.
 */
async function runLongOperations(group: ProcessGroup, services: Services, options: BenchOptions): Promise<Measured<LongOperationsResult>> {
  if (services.gateway === undefined) return { ok: false, error: services.gatewaySkipped ?? 'the gateway is not running' };
  const measured = await attempt(async () => {
    const gateway = await startGatewayBeside(group, services, options);
    try {
      const sizes = options.quick
        ? { videos: 200, backlog: 100, responses: 100, windowSeconds: 5 }
        : { videos: 2_000, backlog: 1_000, responses: 200, windowSeconds: 20 };
      return await measureLongOperations(gateway, { ...sizes, timeoutMs: 6 * 60_000 }, progress);
    } finally {
      await group.stop(gateway.child);
    }
  });
  if (!measured.ok) progress(`long operations: ${measured.error}`);
  return measured;
}

async function startServices(group: ProcessGroup, options: BenchOptions, notes: string[]): Promise<Services> {
  const upstream = group.start({
    name: 'upstream simulator',
    nodeArgs: ['bench/upstream.ts', `--delay-ms=${options.upstreamDelayMs}`],
    core: CORE_LOAD,
    cwd: repoRoot,
  });
  const upstreamOrigin = `http://127.0.0.1:${(await readyLine<{ port: number }>(upstream, START_TIMEOUT_MS)).port}`;
  const bare = await startBareProxy(group, upstreamOrigin);

  let gateway: Services['gateway'];
  let gatewaySkipped = gatewayMissing(repoRoot) ?? undefined;
  if (gatewaySkipped === undefined) {
    const redisUrl = await reachableRedis(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379');
    notes.push(
      redisUrl
        ? `chat-limited: the limit counters in Redis at ${redisUrl}`
        : 'chat-limited: no Redis answered (BENCH_REDIS_URL, default the local one): the limit counters are in the process',
    );
    try {
      const running: RunningGateway = await startGateway(group, {
        repoRoot,
        upstreamOrigin,
        firstGapMs: options.durations.firstGapMs,
        holdMs: options.durations.holdMs,
        cpuProfileDir: options.cpuProfileDir,
        dataRoot: options.dataRoot,
        timeoutMs: START_TIMEOUT_MS,
        redisUrl,
      });
      cleanups.push(running.cleanup);
      gateway = {
        name: 'gateway',
        origin: running.origin,
        child: running.child,
        apiKey: running.apiKey,
        limitedKey: running.limitedKey,
        limitCounters: running.limitCounters,
        adminKey: running.adminKey,
      };
    } catch (error) {
      gatewaySkipped = `the gateway did not start: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  if (gatewaySkipped !== undefined) notes.push(`gateway not measured: ${gatewaySkipped.split('\n')[0]}`);

  let portkey: Target | undefined;
  let portkeySkipped = '';
  const found = findPortkey(repoRoot);
  if ('missing' in found) portkeySkipped = found.missing;
  else {
    try {
      const started = await startPortkey(group, found.entry, START_TIMEOUT_MS);
      portkey = { name: 'portkey', origin: started.origin, child: started.child };
    } catch (error) {
      portkeySkipped = `${found.entry} did not start: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
    }
  }
  if (portkeySkipped !== '') notes.push(portkeySkipped);

  return {
    upstreamOrigin,
    direct: { name: 'direct', origin: upstreamOrigin },
    bare,
    gateway,
    gatewaySkipped,
    portkey,
  };
}

/** The results before their end and their bars are added. */
type Unchecked = Omit<BenchResults, 'bars' | 'finishedAt'>;
/** What a run measured so far: each part is set once it has run (null until then, or when not selected). */
type Measurements = { -readonly [Part in keyof Unchecked]: Unchecked[Part] };

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const placement = detectPlacement(options.pin);
  pinSelf(placement);
  const group = new ProcessGroup(placement);
  const notes: string[] = [];
  const [loadAtStart] = loadavg();
  const measured: Measurements = {
    startedAt: new Date().toISOString(),
    mode: options.quick ? 'quick' : 'full',
    machine: {
      cpuModel: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      memoryBytes: totalmem(),
      os: `${osType()} ${release()}`,
      node: process.version,
      placement: placement.note,
      loadAverageAtStart: loadAtStart,
    },
    settings: {
      saturationConnections: options.saturationConnections,
      pacedRate: options.pacedRate,
      upstreamDelayMs: options.upstreamDelayMs,
      dataRoot: options.dataRoot ?? tmpdir(),
      durations: { ...options.durations },
    },
    notes,
    idleRssBytes: {},
    workloads: [],
    ttfb: null,
    concurrentStreams: null,
    backgroundJobs: null,
    videoJobs: null,
    longOperations: null,
    limitsAb: null,
    scaleOut: null,
    race: null,
    dashboardLists: null,
    dashboardUsage: null,
    chatBesideDashboard: null,
  };
  /** The part running now, named in the report of a run stopped before its end. */
  let running = 'the start of the processes';
  const stop = (reason: string) => {
    progress(`bench: ${reason}; stopping every process`);
    group.killNow();
    for (const cleanup of cleanups) cleanup();
  };
  process.once('SIGINT', () => {
    stop('interrupted');
    process.exit(1);
  });
  process.once('SIGTERM', () => {
    stop('terminated');
    process.exit(1);
  });
  // The whole run is bounded, whatever hangs; what was measured before the limit is still reported.
  setTimeout(() => {
    const reason = `exceeded its time limit of ${options.timeLimitMinutes} minutes`;
    stop(reason);
    notes.push(`stopped: ${reason} during ${running}; that part and every part after it were not measured (--time-limit=MINUTES)`);
    report(measured, options.resultsDir);
    process.exit(1);
  }, options.timeLimitMinutes * 60_000).unref();

  if (options.quick) notes.push('quick mode: short phases, figures only indicative');
  // Other work on the machine shares the pinned cores: the figures are then noisier and lower.
  if (loadAtStart > 0.5) notes.push(`load average ${loadAtStart.toFixed(2)} at start: other processes are using the CPUs, figures are noisy`);
  try {
    const services = await startServices(group, options, notes);
    for (const target of [services.bare, services.gateway, services.portkey]) {
      if (target?.child) measured.idleRssBytes[target.name] = residentBytes(target.child.pid);
    }
    running = 'the warm-up';
    await warmUp(services, options);
    for (const workload of WORKLOADS.filter((candidate) => options.workloads.includes(candidate.id))) {
      running = `the ${workload.id} workload`;
      measured.workloads = [...measured.workloads, await runWorkload(workload, services, options)];
    }
    running = "the probe of the gateway's streams";
    const gatewayStreams = await gatewayServesStreams(services, measured.workloads);
    const part = async <T>(name: string, selected: boolean, measure: () => Promise<T>): Promise<T | null> => {
      if (!selected) return null;
      running = name;
      return measure();
    };
    measured.ttfb = await part('the time to first byte', options.workloads.includes('chat-stream'), () => runTtfb(services, options, gatewayStreams));
    measured.concurrentStreams = await part('the open streams', options.streamsTest, () => runStreams(group, services, options, gatewayStreams));
    measured.backgroundJobs = await part('the background responses', options.jobsTest, () =>
      runJobs(services, RESPONSE_JOB_ROUTES, backgroundBody, options.quick ? 200 : 2_000),
    );
    measured.limitsAb = await part('the key limits A/B', options.limitsTest, () => runLimitsAb(services, options));
    measured.videoJobs = await part('the video jobs', options.videosTest, () => runJobs(services, VIDEO_JOB_ROUTES, videoBody, options.quick ? 50 : 300));
    measured.longOperations = await part('the long operations', options.videosTest, () => runLongOperations(group, services, options));
    measured.scaleOut = await part('the scale-out path', options.scaleTest, () => runScaleOut(group, services, options));
    measured.race = await part('the race', options.raceTest, () => runRace(group, services, options));
    const databaseUrl = process.env.BENCH_DATABASE_URL ?? DEFAULT_BENCH_DATABASE_URL;
    measured.dashboardLists = await part('the dashboard lists', options.dashboardTest, () => attempt(() => measureDashboardLists(databaseUrl, progress)));
    measured.chatBesideDashboard = await part('chat beside the dashboard', options.dashboardTest, () => runChatBesideDashboard(services, options));
    measured.dashboardUsage = await part('the usage analytics', options.dashboardTest, () => attempt(() => measureDashboardUsage(databaseUrl, progress)));
  } finally {
    await group.stopAll();
    for (const cleanup of cleanups) cleanup();
  }
  report(measured, options.resultsDir);
}

/** Writes the results to latest.json and prints the report, with the bars checked. */
function report(measured: Measurements, resultsDir: string): void {
  const results: BenchResults = { ...measured, finishedAt: new Date().toISOString(), bars: checkBars(measured) };
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, 'latest.json');
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(formatReport(results));
  console.log(`\nresults written to ${relative(process.cwd(), file) || file}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
