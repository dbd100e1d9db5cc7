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
