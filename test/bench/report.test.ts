/** The benchmark's bars: each dialect workload's gateway CPU per request is held to chat's of the same run. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkBars, formatReport } from '../../bench/report.ts';
import type { WorkloadResult } from '../../bench/results.ts';
import type { WorkloadId } from '../../bench/workloads.ts';

type Run = Parameters<typeof checkBars>[0];

/** A workload measured on the gateway only, with this CPU per request at saturation. */
const measured = (id: WorkloadId, microsPerRequest: number): WorkloadResult => ({
  id,
  title: id,
  skipped: {},
  targets: { gateway: { saturationCpu: { microsPerRequest, utilization: 1, systemShare: 0.2 } } },
});

const run = (workloads: readonly WorkloadResult[]): Run => ({
  startedAt: '2026-01-01T00:00:00.000Z',
  mode: 'full',
  machine: { cpuModel: 'cpu', cores: 2, memoryBytes: 2 ** 30, os: 'Linux', node: 'v26', placement: 'pinned', loadAverageAtStart: 0 },
  settings: { saturationConnections: 50, pacedRate: 500, upstreamDelayMs: 0, dataRoot: 'tmp', durations: {} },
  notes: [],
  idleRssBytes: {},
  workloads,
  ttfb: null,
  concurrentStreams: null,
  backgroundJobs: null,
});

const dialectBar = (bars: ReturnType<typeof checkBars>, id: WorkloadId) => bars.find((bar) => bar.bar.startsWith(`${id} CPU per request`))!;

describe('bench bars', () => {
  test("responses and messages: their CPU per request over chat's in the same run, met up to 10 % above it", () => {
    const bars = checkBars(run([measured('chat', 200), measured('responses', 219), measured('messages', 221)]));
    assert.deepEqual(dialectBar(bars, 'responses'), {
      bar: "responses CPU per request at most 10 % above chat's (gateway, same run)",
      measured: '1.09× (219.0 / 200.0 µs)',
      met: true,
    });
    assert.equal(dialectBar(bars, 'messages').met, false);
    assert.equal(dialectBar(bars, 'messages').measured, '1.10× (221.0 / 200.0 µs)');
  });

  test('a dialect cheaper than chat meets the bar', () => {
    assert.equal(dialectBar(checkBars(run([measured('chat', 200), measured('responses', 150)])), 'responses').met, true);
  });

  test("streamed workloads: their CPU per request over the plain workload's of the same dialect, met up to 1.3 times it", () => {
    const bars = checkBars(run([measured('chat', 200), measured('chat-stream', 260), measured('messages', 200), measured('messages-stream', 262)]));
    const streamBar = (id: WorkloadId) => bars.find((bar) => bar.bar.startsWith(`${id} CPU per request`))!;
    assert.deepEqual(streamBar('chat-stream'), {
      bar: "chat-stream CPU per request at most 1.3× chat's (gateway, same run)",
      measured: '1.30× (260.0 / 200.0 µs)',
      met: true,
    });
    assert.equal(streamBar('messages-stream').met, false);
    assert.equal(streamBar('messages-stream').measured, '1.31× (262.0 / 200.0 µs)');
    assert.equal(dialectBar(checkBars(run([measured('chat-stream', 200)])), 'chat-stream').met, null);
  });

  test('not measured when the run has no chat or no such workload', () => {
    for (const workloads of [[measured('responses', 200)], [measured('chat', 200)]]) {
      assert.deepEqual(dialectBar(checkBars(run(workloads)), 'responses'), {
        bar: "responses CPU per request at most 10 % above chat's (gateway, same run)",
        measured: '—',
        met: null,
      });
    }
  });
});

describe('CPU bars', () => {
  /** A workload measured on the gateway and the bare proxy, with these CPU per request at saturation. */
  const both = (id: WorkloadId, gateway: number, bare: number): WorkloadResult => ({
    id,
    title: id,
    skipped: {},
    targets: {
      gateway: { saturationCpu: { microsPerRequest: gateway, utilization: 1, systemShare: 0.2 } },
      'bare-proxy': { saturationCpu: { microsPerRequest: bare, utilization: 1, systemShare: 0.2 } },
    },
  });
  const bar = (workloads: readonly WorkloadResult[], start: string) => checkBars(run(workloads)).find((check) => check.bar.startsWith(start))!;

  test("chat: met at up to 3× the bare proxy's CPU per request of the same run", () => {
    assert.deepEqual(bar([both('chat', 120, 40)], 'chat CPU per request'), {
      bar: "chat CPU per request ≤ 3× the bare proxy's (same run)",
      measured: '3.00× (120.0 / 40.0 µs)',
      met: true,
    });
    assert.equal(bar([both('chat', 121, 40)], 'chat CPU per request').met, false);
    assert.equal(bar([measured('chat', 121)], 'chat CPU per request').met, null);
  });

  test('images: met at up to 1,000 µs of CPU per request', () => {
    assert.deepEqual(bar([both('images', 1000, 300)], 'images: CPU per request'), {
      bar: 'images: CPU per request ≤ 1,000 µs (one 256x256 PNG as b64_json)',
      measured: '1000 µs (3.3× the bare proxy)',
      met: true,
    });
    assert.equal(bar([both('images', 1001, 300)], 'images: CPU per request').met, false);
    assert.equal(bar([], 'images: CPU per request').met, null);
  });
});

/** A latency summary with this p50 and p99 (ms). */
const latency = (p50: number, p99: number) => ({ count: 1, p50, p90: p99, p99, mean: p50, max: p99 });

describe('added latency bars', () => {
  const bar = (results: Run, start: string) => checkBars(results).find((check) => check.bar.startsWith(start))!;

  test("chat at concurrency 1: met up to 0.1 ms over the bare proxy's p50", () => {
    const atOne = (gateway: number, bare: number): WorkloadResult => {
      const result = (p50: number) => ({
        ok: true as const,
        value: { connections: 1, durationSeconds: 1, completed: 1, completedInRun: 1, requestsPerSecond: 1, non2xx: 0, errors: 0, latency: latency(p50, p50) },
      });
      return {
        id: 'chat',
        title: 'chat',
        skipped: {},
        targets: { gateway: { concurrencyOne: result(gateway) }, 'bare-proxy': { concurrencyOne: result(bare) } },
      };
    };
    assert.deepEqual(bar(run([atOne(0.25, 0.15)]), 'chat added latency'), {
      bar: 'chat added latency at concurrency 1 (p50) ≤ 0.1 ms over the bare proxy',
      measured: '+0.100 ms',
      met: true,
    });
    assert.equal(bar(run([atOne(0.3, 0.15)]), 'chat added latency').met, false);
    assert.equal(bar(run([]), 'chat added latency').met, null);
  });

  test("streaming's time to first byte: met up to 1 ms over the bare proxy's p50", () => {
    const ttfb = (gateway: number, bare: number): Run['ttfb'] => {
      const result = (p50: number) => ({ ok: true as const, value: { requests: 1, failed: 0, firstByte: latency(p50, p50), complete: latency(p50, p50) } });
      return { skipped: {}, targets: { gateway: result(gateway), 'bare-proxy': result(bare) } };
    };
    assert.deepEqual(bar({ ...run([]), ttfb: ttfb(1.5, 0.5) }, 'streaming adds'), {
      bar: 'streaming adds ≤ 1 ms to time to first byte (p50, over the bare proxy)',
      measured: '+1.000 ms',
      met: true,
    });
    assert.equal(bar({ ...run([]), ttfb: ttfb(1.6, 0.5) }, 'streaming adds').met, false);
    assert.equal(bar(run([]), 'streaming adds').measured, '—');
  });
});

describe('p99 bars at the paced rate', () => {
  /** A workload paced on the gateway and the bare proxy, with these p99s (ms). */
  const paced = (id: WorkloadId, gateway: number, bare: number): WorkloadResult => {
    const result = (p99: number) => ({
      ok: true as const,
      value: { rate: 500, sent: 1, completed: 1, failed: 0, achievedRate: 500, latency: latency(1, p99) },
    });
    return { id, title: id, skipped: {}, targets: { gateway: { paced: result(gateway) }, 'bare-proxy': { paced: result(bare) } } };
  };
  const bar = (workloads: readonly WorkloadResult[], start: string) => checkBars(run(workloads)).find((check) => check.bar.startsWith(start))!;

  test("plain chat within 1 ms of the bare proxy's p99, each streamed workload within 10 ms", () => {
    assert.deepEqual(bar([paced('chat', 5, 4)], 'chat p99'), { bar: 'chat p99 at 500 req/s ≤ 1 ms above the bare proxy', measured: '+1.000 ms', met: true });
    assert.equal(bar([paced('chat', 5.5, 4)], 'chat p99').met, false);
    assert.deepEqual(bar([paced('chat-stream', 14, 4)], 'chat-stream p99'), {
      bar: 'chat-stream p99 at 500 req/s ≤ 10 ms above the bare proxy',
      measured: '+10.000 ms',
      met: true,
    });
    assert.equal(bar([paced('messages-stream', 14.5, 4)], 'messages-stream p99').met, false);
    assert.equal(bar([paced('messages-stream', 3, 4)], 'messages-stream p99').measured, '-1.000 ms');
    assert.deepEqual(bar([], 'messages-stream p99'), { bar: 'messages-stream p99 at 500 req/s ≤ 10 ms above the bare proxy', measured: '—', met: null });
  });
});

describe('bench report', () => {
  test('key limits A/B: the rounds, the median, and the bar met only with Redis counters at ≤ 10 µs', () => {
    const limitsAb = (counters: 'redis' | 'memory', differences: number[]) => ({
      ok: true as const,
      value: {
        counters,
        seconds: 3,
        rounds: differences.map((difference) => ({ plain: 130, limited: 130 + difference })),
        medianMicros: [...differences].sort((a, b) => a - b)[Math.floor(differences.length / 2)],
        meanMicros: differences.reduce((total, value) => total + value, 0) / differences.length,
      },
    });
    const bar = (results: Parameters<typeof checkBars>[0]) => checkBars(results).find((check) => check.bar.startsWith('key limits'));
    const met = { ...run([]), limitsAb: limitsAb('redis', [6, 8, 7]) };
    assert.equal(bar(met)?.met, true);
    assert.match(formatReport({ ...met, finishedAt: 'x', bars: checkBars(met) }), /median 7\.0 µs/);
    assert.equal(bar({ ...run([]), limitsAb: limitsAb('redis', [9, 14, 12]) })?.met, false);
    assert.equal(bar({ ...run([]), limitsAb: limitsAb('memory', [1, 2, 3]) })?.met, null, 'not the bar: it is about Redis');
    assert.equal(bar(run([]))?.met, null);
  });

  test('background jobs: the measured rates in their own table, or the error', () => {
    const figures = {
      jobs: 2_000,
      submitters: 8,
      submittedPerSecond: 561.4,
      completedPerSecond: 555.2,
      submitSeconds: 3.56,
      totalSeconds: 3.6,
      notCompleted: 0,
      cpuMicrosPerJob: 412.4,
      cpuMicrosPerPoll: 98.6,
    };
    const ok = formatReport({ ...run([]), finishedAt: 'x', bars: [], backgroundJobs: { ok: true, value: figures } });
    assert.match(ok, /background responses/);
    assert.match(ok, /\b2000\s+8\s+561\s+555\s+3\.56\s+3\.60\s+0\s+412\s+99\b/);
    const videos = formatReport({ ...run([]), finishedAt: 'x', bars: [], videoJobs: { ok: true, value: { ...figures, jobs: 300 } } });
    assert.match(videos, /video jobs/);
    assert.match(videos, /\b300\s+8\s+561\b/);
    assert.doesNotMatch(videos, /background responses/);
    const failed = formatReport({ ...run([]), finishedAt: 'x', bars: [], backgroundJobs: { ok: false, error: 'the gateway is not running' } });
    assert.match(failed, /error: the gateway is not running/);
    assert.doesNotMatch(formatReport({ ...run([]), finishedAt: 'x', bars: [] }), /background responses/);
  });
});

describe('the scale-out path and the race', () => {
  type Scale = import('../../bench/scale-out.ts').ScaleOutResult;
  type ScaleWorkload = Scale['workloads'][number];
  type Race = import('../../bench/race.ts').RaceResult;
  const setupRound = (instanceMicros: number, roundTrips: number | null) => ({
    requestsPerSecond: 1000,
    failed: 0,
    databaseMicrosPerRequest: roundTrips === null ? null : 150,
    gatewayMicrosPerRequest: instanceMicros,
    instanceMicrosPerRequest: [instanceMicros],
    roundTripsPerRequest: roundTrips,
    backends: null,
  });
  const median = (instanceMicros: number, roundTrips: number | null) => ({
    requestsPerSecond: 1000,
    gatewayMicrosPerRequest: instanceMicros,
    instanceMicrosPerRequest: [instanceMicros],
    databaseMicrosPerRequest: roundTrips === null ? null : 150,
    roundTripsPerRequest: roundTrips,
  });
  const workload = (id: ScaleWorkload['id'], postgresMicros: number, trips: number): ScaleWorkload => ({
    id,
    rounds: [{ embedded: setupRound(200, null), postgres: setupRound(postgresMicros, 0.2), 'postgres-2': setupRound(postgresMicros, trips) }],
    median: { embedded: median(200, null), postgres: median(postgresMicros, 0.2), 'postgres-2': median(postgresMicros, trips) },
    paced: { embedded: 'not measured', postgres: 'not measured', 'postgres-2': 'not measured' },
    // One at a time is printed, not held to the bar.
    sequential: { requests: 300, roundTripsPerRequest: 3.2, ownRoundTripsPerRequest: 3.05 },
    postgresOverEmbedded: 1,
    twoOverOne: 1,
    lockWaitShare: 0,
    lockWaitShareOfActive: 0,
    ledgerExact: { embedded: true, postgres: true },
  });
  const scale = (workloads: readonly ScaleWorkload[]): Scale => ({
    counters: 'redis',
    rounds: 1,
    seconds: 3,
    pacedSeconds: 3,
    pacedRate: 500,
    placement: 'PostgreSQL on CPU 1',
    loadAverage: [0, 0],
    workloads,
    failures: [],
  });
  const bar = (results: Run, start: string) => checkBars(results).find((check) => check.bar.startsWith(start))!;

  test("chat's CPU on PostgreSQL against the embedded store's, and the round trips of every non-streamed workload", () => {
    const met = { ...run([]), scaleOut: { ok: true as const, value: scale([workload('chat', 290, 2), workload('messages', 300, 3)]) } };
    assert.equal(bar(met, 'scale-out: chat CPU').met, true);
    assert.match(bar(met, 'scale-out: chat CPU').measured, /^1\.45 × \(290 \/ 200 µs; 2\.20 × with PostgreSQL's own CPU\)$/);
    assert.equal(bar(met, 'scale-out: ≤ 3 database round trips').met, true);
    const missed = { ...run([]), scaleOut: { ok: true as const, value: scale([workload('chat', 310, 2), workload('responses', 250, 3.2)]) } };
    assert.equal(bar(missed, 'scale-out: chat CPU').met, false);
    assert.equal(bar(missed, 'scale-out: ≤ 3 database round trips').met, false);
    assert.match(bar(missed, 'scale-out: ≤ 3 database round trips').measured, /responses 3\.20 \(one at a time 3\.05, its request log row included\)/);
    assert.equal(bar(run([]), 'scale-out: chat CPU').met, null);
  });

  test('a workload that could not be measured leaves the ledger bar unmet and is printed', () => {
    const failed = {
      ...run([]),
      scaleOut: { ok: true as const, value: { ...scale([workload('chat', 290, 2)]), failures: [{ id: 'jobs' as const, error: 'jobs stuck' }] } },
    };
    assert.equal(bar(failed, 'scale-out: the ledger exact').met, false);
    assert.match(formatReport({ ...failed, finishedAt: 'x', bars: checkBars(failed) }), /! jobs NOT MEASURED: jobs stuck/);
  });

  const race = (overrides: Partial<Race>): Race => ({
    instances: 4,
    requests: 10_000,
    concurrency: 64,
    seconds: 40,
    requestsPerSecond: 250,
    placement: 'PostgreSQL on CPU 1',
    loadAverage: [0, 0],
    outcomes: { limited: { '200': 600, '429 spend_limit_exceeded': 500 }, plain: { '200': 600, '402 insufficient_quota': 400 } },
    failures: 0,
    failureSamples: [],
    wallet: { credited: '1000000000000', charged: '990000000000', balance: '10000000000', answeredCost: '990000000000' },
    limitedKey: { spendLimit: '500000000000', charged: '495000000000', answeredCost: '495000000000', requestsPerMinute: 1000, admitted: 1100, allowed: 1600 },
    overspent: { wallet: false, keySpend: false, requestsPerMinute: false },
    ledger: true,
    ...overrides,
  });
  const raceBars = (value: Race) => checkBars({ ...run([]), race: { ok: true, value } }).filter((check) => check.bar.startsWith('race'));

  test('the race: every promise kept, or each broken one named', () => {
    assert.deepEqual(
      raceBars(race({})).map((check) => check.met),
      [true, true, true],
    );
    const broken = raceBars(
      race({
        overspent: { wallet: false, keySpend: true, requestsPerMinute: false },
        ledger: 'charged 2, the answers stated 1',
        failures: 3,
        failureSamples: ['plain key: 500 internal_error'],
      }),
    );
    assert.deepEqual(
      broken.map((check) => check.met),
      [false, false, false],
    );
    assert.match(broken[0].measured, /OVERSPENT: keySpend/);
    assert.match(broken[2].measured, /500 internal_error/);
    const notRun = checkBars({ ...run([]), race: { ok: false, error: 'the race needs Redis' } }).filter((check) => check.bar.startsWith('race'));
    assert.equal(notRun[0].met, false);
    assert.match(notRun[0].measured, /the race needs Redis/);
  });
});
