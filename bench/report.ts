/**
 * The readable report: for every workload, each target's absolute figures beside their ratios to
 * the two baselines of the same run (the bare proxy and the upstream called directly), and the
 * bars of docs/performance.md checked against them.
 */
import type { LongOperationsResult } from './long-operations.ts';
import type { ClosedLoopResult } from './load.ts';
import type { PacedResult } from './paced.ts';
import type { BarCheck, BenchResults, Measured, TargetFigures, TargetName, WorkloadResult } from './results.ts';
import { BUSY_ACCOUNT_WORKLOADS, type ScaleOutResult, UNSTREAMED_WORKLOADS } from './scale-out.ts';
import { describeRace, type RaceResult } from './race.ts';
import type { DashboardListsResult } from './dashboard-lists.ts';
import type { DashboardUsageResult } from './dashboard-usage.ts';
import { BESIDE_BAR, type ChatBesideDashboardResult } from './chat-beside-dashboard.ts';
import { difference, percent, ratio, type LatencySummary } from './stats.ts';
import type { TtfbResult } from './ttfb.ts';
import type { WorkloadId } from './workloads.ts';

const LABELS: Record<TargetName, string> = { direct: 'direct', 'bare-proxy': 'bare proxy', gateway: 'gateway', portkey: 'portkey' };
/** Targets compared against the baselines; the bare proxy is also compared against direct. */
const COMPARED: readonly TargetName[] = ['bare-proxy', 'gateway', 'portkey'];
/** Values below this many ms are at the resolution of the measurement. */
const MS_DIGITS = 3;

type RowKind = 'throughput' | 'latency' | 'memory' | 'cpu' | 'share';

interface Row {
  readonly label: string;
  readonly kind: RowKind;
  readonly values: Partial<Record<TargetName, number | null>>;
}

const value = <T>(measured: Measured<T> | undefined): T | undefined => (measured?.ok ? measured.value : undefined);
const mb = (bytes: number | null | undefined) => (bytes === null || bytes === undefined ? null : bytes / 2 ** 20);

function format(kind: RowKind, amount: number | null | undefined): string {
  if (amount === null || amount === undefined) return '—';
  switch (kind) {
    case 'throughput':
      return Math.round(amount).toLocaleString('en-US');
    case 'latency':
      return amount.toFixed(MS_DIGITS);
    case 'memory':
    case 'cpu':
      return amount.toFixed(1);
    case 'share':
      return `${(amount * 100).toFixed(0)} %`;
    default: {
      const unreachable: never = kind;
      throw new Error(`unknown row kind ${String(unreachable)}`);
    }
  }
}

/** "0.67×" for throughput, memory and CPU; "+0.061 (1.32×)" for latency, where the difference is the point. */
function compare(kind: RowKind, measured: number | null | undefined, baseline: number | null | undefined): string {
  const times = ratio(measured, baseline);
  if (times === null || kind === 'share') return '—';
  if (kind !== 'latency') return `${times.toFixed(2)}×`;
  const added = difference(measured, baseline) as number;
  return `${added >= 0 ? '+' : ''}${added.toFixed(MS_DIGITS)} (${times.toFixed(2)}×)`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => row[column].length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  ');
  return [line(header), ...rows.map(line)].map((text) => `  ${text}`).join('\n');
}

function renderRows(rows: readonly Row[]): string {
  const present = (['direct', 'bare-proxy', 'gateway', 'portkey'] as const).filter((target) => rows.some((row) => row.values[target] !== undefined));
  const compared = COMPARED.filter((target) => present.includes(target));
  const header = [
    'metric',
    ...present.map((target) => LABELS[target]),
    ...compared.flatMap((target) => [...(target === 'bare-proxy' ? [] : [`${LABELS[target]} vs bare`]), `${LABELS[target]} vs direct`]),
  ];
  const cells = rows.map((row) => [
    row.label,
    ...present.map((target) => format(row.kind, row.values[target])),
    ...compared.flatMap((target) => [
      ...(target === 'bare-proxy' ? [] : [compare(row.kind, row.values[target], row.values['bare-proxy'])]),
      compare(row.kind, row.values[target], row.values.direct),
    ]),
  ]);
  return table(header, cells);
}

function latencyRows(label: string, figures: Partial<Record<TargetName, LatencySummary | null | undefined>>): Row[] {
  const pick = (key: 'p50' | 'p99') =>
    Object.fromEntries(Object.entries(figures).map(([target, summary]) => [target, summary?.[key] ?? null])) as Row['values'];
  return [
    { label: `${label} p50 (ms)`, kind: 'latency', values: pick('p50') },
    { label: `${label} p99 (ms)`, kind: 'latency', values: pick('p99') },
  ];
}

function perTarget<T>(targets: Partial<Record<TargetName, TargetFigures>>, read: (figures: TargetFigures) => T): Partial<Record<TargetName, T>> {
  return Object.fromEntries(Object.entries(targets).map(([target, figures]) => [target, read(figures)])) as Partial<Record<TargetName, T>>;
}

function workloadRows(workload: WorkloadResult, settings: BenchResults['settings']): Row[] {
  const saturation = perTarget(workload.targets, (figures) => value<ClosedLoopResult>(figures.saturation));
  const concurrencyOne = perTarget(workload.targets, (figures) => value<ClosedLoopResult>(figures.concurrencyOne)?.latency);
  const paced = perTarget(workload.targets, (figures) => value<PacedResult>(figures.paced)?.latency);
  return [
    {
      label: `req/s @${settings.saturationConnections} conn`,
      kind: 'throughput',
      values: Object.fromEntries(Object.entries(saturation).map(([target, result]) => [target, result?.requestsPerSecond ?? null])),
    },
    {
      label: 'CPU µs/req @saturation',
      kind: 'cpu',
      values: perTarget(workload.targets, (figures) => figures.saturationCpu?.microsPerRequest ?? null),
    },
    {
      label: 'CPU use @saturation',
      kind: 'share',
      values: perTarget(workload.targets, (figures) => figures.saturationCpu?.utilization ?? null),
    },
    {
      label: '  of which kernel',
      kind: 'share',
      values: perTarget(workload.targets, (figures) => figures.saturationCpu?.systemShare ?? null),
    },
    ...latencyRows('c=1', concurrencyOne),
    ...latencyRows(`${settings.pacedRate}/s`, paced),
    {
      label: 'peak RSS (MB)',
      kind: 'memory',
      values: Object.fromEntries(
        Object.entries(workload.targets)
          .filter(([target]) => target !== 'direct')
          .map(([target, figures]) => [target, mb(figures.peakRssBytes)]),
      ),
    },
  ];
}

/** Failures and skips, so that a missing figure always says why. */
function problems(workload: WorkloadResult): string[] {
  const lines = Object.entries(workload.skipped).map(([target, reason]) => `${LABELS[target as TargetName]}: ${reason}`);
  for (const [target, figures] of Object.entries(workload.targets)) {
    for (const [phase, measured] of Object.entries(figures)) {
      if (measured && typeof measured === 'object' && 'ok' in measured) {
        if (!measured.ok) lines.push(`${LABELS[target as TargetName]} ${phase}: ${measured.error}`);
        else {
          const result = measured.value as { non2xx?: number; errors?: number; failed?: number };
          const bad = (result.non2xx ?? 0) + (result.errors ?? 0) + (result.failed ?? 0);
          if (bad > 0) lines.push(`${LABELS[target as TargetName]} ${phase}: ${bad} failed requests`);
        }
      }
    }
  }
  return lines;
}

export function formatReport(results: BenchResults): string {
  const out: string[] = [];
  const { machine } = results;
  out.push(
    `Gateway benchmark (${results.mode}) — ${results.startedAt}`,
    `machine: ${machine.cpuModel}, ${machine.cores} cores, ${(machine.memoryBytes / 2 ** 30).toFixed(1)} GiB, ${machine.os}, node ${machine.node}`,
    `placement: ${machine.placement}`,
    `gateway data directory under: ${results.settings.dataRoot}`,
    ...results.notes.map((note) => `note: ${note}`),
    '',
  );
  const idle = Object.entries(results.idleRssBytes).map(([target, bytes]) => `${LABELS[target as TargetName]} ${format('memory', mb(bytes))} MB`);
  if (idle.length > 0) out.push(`RSS after start: ${idle.join(', ')}`, '');

  for (const workload of results.workloads) {
    out.push(`${workload.id} — ${workload.title}`, renderRows(workloadRows(workload, results.settings)));
    for (const line of problems(workload)) out.push(`  ! ${line}`);
    out.push('');
  }

  if (results.ttfb !== null) {
    const firstByte = Object.fromEntries(Object.entries(results.ttfb.targets).map(([target, measured]) => [target, value<TtfbResult>(measured)?.firstByte]));
    out.push('stream time to first byte (concurrency 1)', renderRows(latencyRows('TTFB', firstByte)));
    for (const [target, reason] of Object.entries(results.ttfb.skipped)) out.push(`  ! ${LABELS[target as TargetName]}: ${reason}`);
    for (const [target, measured] of Object.entries(results.ttfb.targets)) {
      if (!measured.ok) out.push(`  ! ${LABELS[target as TargetName]}: ${measured.error}`);
    }
    out.push('');
  }

  if (results.concurrentStreams !== null) {
    const header = ['target', 'streams', 'open at once', 'all started after (ms)', 'completed', 'failed', 'RSS all started (MB)', 'peak RSS (MB)'];
    const rows: string[][] = [];
    for (const [target, measured] of Object.entries(results.concurrentStreams.targets)) {
      if (!measured.ok) {
        rows.push([LABELS[target as TargetName], '—', '—', '—', '—', '—', '—', `error: ${measured.error}`]);
        continue;
      }
      const result = measured.value;
      rows.push([
        LABELS[target as TargetName],
        String(result.streams),
        String(result.peakOpen),
        result.allStartedAfterMs === null ? 'never' : result.allStartedAfterMs.toFixed(0),
        String(result.completed),
        String(result.failed),
        format('memory', mb(result.rssAllStartedBytes)),
        format('memory', mb(result.peakRssBytes)),
      ]);
    }
    out.push('concurrent open streams', table(header, rows));
    for (const [target, reason] of Object.entries(results.concurrentStreams.skipped)) out.push(`  ! ${LABELS[target as TargetName]}: ${reason}`);
    out.push('');
  }

  const limitsAb = results.limitsAb;
  if (limitsAb !== undefined && limitsAb !== null) {
    const header = ['round', 'chat CPU µs / req', 'chat-limited CPU µs / req', 'difference µs'];
    const rows = limitsAb.ok
      ? limitsAb.value.rounds.map((round, index) => [
          String(index + 1),
          round.plain.toFixed(1),
          round.limited.toFixed(1),
          (round.limited - round.plain).toFixed(1),
        ])
      : [['—', '—', '—', `error: ${limitsAb.error}`]];
    const summary = limitsAb.ok
      ? `median ${limitsAb.value.medianMicros.toFixed(1)} µs, mean ${limitsAb.value.meanMicros.toFixed(1)} µs (counters: ${limitsAb.value.counters})`
      : '';
    out.push('key limits A/B (gateway: saturation runs alternating a plain key and a key with every limit)', table(header, rows), summary, '');
  }

  if (results.scaleOut !== undefined && results.scaleOut !== null) out.push(...scaleOutSection(results.scaleOut));
  if (results.race !== undefined && results.race !== null) out.push(...raceSection(results.race));
  if (results.dashboardLists !== undefined && results.dashboardLists !== null) out.push(...dashboardListsSection(results.dashboardLists));
  if (results.dashboardUsage !== undefined && results.dashboardUsage !== null) out.push(...dashboardUsageSection(results.dashboardUsage));
  if (results.chatBesideDashboard !== undefined && results.chatBesideDashboard !== null) out.push(...besideSection(results.chatBesideDashboard));

  const jobTables = [
    ['background responses (gateway: jobs submitted, then run by its workers)', results.backgroundJobs],
    ['video jobs (gateway: 4-second clips of the simulated provider, submitted, then run by its workers)', results.videoJobs ?? null],
  ] as const;
  for (const [title, measured] of jobTables) {
    if (measured === null) continue;
    const header = [
      'jobs',
      'submitters',
      'submitted / s',
      'completed / s',
      'submit (s)',
      'all ended after (s)',
      'not completed',
      'CPU µs / job',
      'CPU µs / poll',
    ];
    const micros = (value: number | null) => (value === null ? '—' : value.toFixed(0));
    const rows = measured.ok
      ? [
          [
            String(measured.value.jobs),
            String(measured.value.submitters),
            measured.value.submittedPerSecond.toFixed(0),
            measured.value.completedPerSecond.toFixed(0),
            measured.value.submitSeconds.toFixed(2),
            measured.value.totalSeconds.toFixed(2),
            String(measured.value.notCompleted),
            micros(measured.value.cpuMicrosPerJob),
            micros(measured.value.cpuMicrosPerPoll),
          ],
        ]
      : [['—', '—', '—', '—', '—', '—', '—', '—', `error: ${measured.error}`]];
    out.push(title, table(header, rows), '');
  }

  if (results.longOperations !== undefined && results.longOperations !== null) out.push(...longOperationsSection(results.longOperations));

  out.push(
    'Bars',
    table(
      ['bar', 'measured', 'status'],
      results.bars.map((bar) => [bar.bar, bar.measured, barStatus(bar)]),
    ),
  );
  return out.join('\n');
}

function barStatus(bar: BarCheck): string {
  if (bar.met === null) return 'not measured';
  return bar.met ? 'met' : 'NOT MET';
}

/**
 * Workloads of another client dialect whose gateway CPU per request is held to chat's of the same
 * run: the dialect's decoding and encoding must cost little beside the work every request shares.
 */
const DIALECT_WORKLOADS = ['messages', 'responses'] as const satisfies readonly WorkloadId[];
/** How far above chat's CPU per request a dialect may be (docs/performance.md, "The bars"). */
const DIALECT_CPU_MARGIN = 0.1;

/**
 * A dialect's gateway CPU per request at saturation against chat's in the same run: CPU, not
 * throughput, because it is the steadier figure between runs and does not depend on the load core.
 */
function dialectCpuBar(workloads: readonly WorkloadResult[], id: (typeof DIALECT_WORKLOADS)[number]): BarCheck {
  return cpuRatioBar(
    workloads,
    id,
    'chat',
    1 + DIALECT_CPU_MARGIN,
    `${id} CPU per request at most ${DIALECT_CPU_MARGIN * 100} % above chat's (gateway, same run)`,
  );
}

/** One workload's gateway CPU per request at saturation against another's of the same run, met up to `bound` times it. */
function cpuRatioBar(workloads: readonly WorkloadResult[], subject: WorkloadId, baseline: WorkloadId, bound: number, bar: string): BarCheck {
  const cpu = (workloadId: WorkloadId) => workloads.find((workload) => workload.id === workloadId)?.targets.gateway?.saturationCpu?.microsPerRequest;
  const measured = cpu(subject);
  const base = cpu(baseline);
  const times = ratio(measured, base);
  return {
    bar,
    measured: times === null ? '—' : `${times.toFixed(2)}× (${(measured as number).toFixed(1)} / ${(base as number).toFixed(1)} µs)`,
    met: times === null ? null : times <= bound,
  };
}

/** Chat's CPU per request is held to 3× the bare proxy's in the same run (docs/performance.md, "The bars"). */
const CHAT_CPU_TIMES_BARE = 3;
/** An image request's CPU, one 256x256 PNG as b64_json (docs/performance.md, "Images at the cost of their bytes"). */
const IMAGE_CPU_MICROS = 1000;

/** The CPU bars of non-streamed chat (against the bare proxy of the same run) and of an image request. */
function cpuBars(workloads: readonly WorkloadResult[]): BarCheck[] {
  const cpu = (id: WorkloadId, target: TargetName) => workloads.find((workload) => workload.id === id)?.targets[target]?.saturationCpu?.microsPerRequest;
  const chat = cpu('chat', 'gateway');
  const times = ratio(chat, cpu('chat', 'bare-proxy'));
  const image = cpu('images', 'gateway');
  return [
    {
      bar: `chat CPU per request ≤ ${CHAT_CPU_TIMES_BARE}× the bare proxy's (same run)`,
      measured: times === null ? '—' : `${times.toFixed(2)}× (${(chat as number).toFixed(1)} / ${(cpu('chat', 'bare-proxy') as number).toFixed(1)} µs)`,
      met: times === null ? null : times <= CHAT_CPU_TIMES_BARE,
    },
    {
      bar: `images: CPU per request ≤ ${IMAGE_CPU_MICROS.toLocaleString('en-US')} µs (one 256x256 PNG as b64_json)`,
      measured: image === undefined ? '—' : `${image.toFixed(0)} µs (${(ratio(image, cpu('images', 'bare-proxy')) ?? Number.NaN).toFixed(1)}× the bare proxy)`,
      met: image === undefined ? null : image <= IMAGE_CPU_MICROS,
    },
  ];
}

/**
 * Streamed workloads and the plain workload of the same dialect and upstream: a streamed answer
 * costs the gateway at most STREAM_CPU_RATIO times the plain one's CPU in the same run.
 */
const STREAMED_WORKLOADS = [
  { streamed: 'chat-stream', plain: 'chat' },
  { streamed: 'messages-stream', plain: 'messages' },
] as const satisfies readonly { readonly streamed: WorkloadId; readonly plain: WorkloadId }[];
/** docs/performance.md, "The bars". */
const STREAM_CPU_RATIO = 1.3;

function streamCpuBar(workloads: readonly WorkloadResult[], pair: (typeof STREAMED_WORKLOADS)[number]): BarCheck {
  const bar = `${pair.streamed} CPU per request at most ${STREAM_CPU_RATIO}× ${pair.plain}'s (gateway, same run)`;
  return cpuRatioBar(workloads, pair.streamed, pair.plain, STREAM_CPU_RATIO, bar);
}

/** docs/performance.md, "The bars": the p99 at the paced rate over the bare proxy's, plain and streamed. */
const CHAT_P99_BOUND_MS = 1;
const STREAM_P99_BOUND_MS = 10;

/** A bar on what the gateway adds to a latency of the bare proxy's (ms), met up to `boundMs`. */
function addedLatencyBar(bar: string, added: number | null, boundMs: number): BarCheck {
  return {
    bar,
    measured: added === null ? '—' : `${added >= 0 ? '+' : ''}${added.toFixed(3)} ms`,
    met: added === null ? null : added <= boundMs,
  };
}

function pacedP99Bar(workloads: readonly WorkloadResult[], id: WorkloadId, rate: number, boundMs: number): BarCheck {
  const targets = workloads.find((workload) => workload.id === id)?.targets;
  const added = difference(value(targets?.gateway?.paced)?.latency?.p99, value(targets?.['bare-proxy']?.paced)?.latency?.p99);
  return addedLatencyBar(`${id} p99 at ${rate} req/s ≤ ${boundMs} ms above the bare proxy`, added, boundMs);
}

/**
 * The bars (docs/performance.md): checked on the chat workloads against the bare proxy of the same
 * run, and the dialect workloads against chat.
 */
export function checkBars(results: Omit<BenchResults, 'bars' | 'finishedAt'>): BarCheck[] {
  const chat = results.workloads.find((workload) => workload.id === 'chat');
  const gateway = chat?.targets.gateway;
  const bare = chat?.targets['bare-proxy'];
  const bars: BarCheck[] = [];

  const throughput = ratio(value(gateway?.saturation)?.requestsPerSecond, value(bare?.saturation)?.requestsPerSecond);
  // When the load side caps the bare proxy below its one core, the CPU each spends per request
  // gives the ratio both would reach if each were CPU-bound: shown beside the measured one.
  const cpuBound = ratio(bare?.saturationCpu?.microsPerRequest, gateway?.saturationCpu?.microsPerRequest);
  bars.push({
    bar: `chat throughput at ${results.settings.saturationConnections} connections ≥ 60 % of the bare proxy`,
    measured:
      throughput === null ? '—' : `${(throughput * 100).toFixed(0)} %${cpuBound === null ? '' : ` (CPU per request: ${(cpuBound * 100).toFixed(0)} %)`}`,
    met: throughput === null ? null : throughput >= 0.6,
  });

  const addedAtOne = difference(value(gateway?.concurrencyOne)?.latency?.p50, value(bare?.concurrencyOne)?.latency?.p50);
  bars.push(addedLatencyBar('chat added latency at concurrency 1 (p50) ≤ 0.1 ms over the bare proxy', addedAtOne, 0.1));

  bars.push(pacedP99Bar(results.workloads, 'chat', results.settings.pacedRate, CHAT_P99_BOUND_MS));

  const ttfb = results.ttfb;
  const addedFirstByte = difference(value(ttfb?.targets.gateway)?.firstByte?.p50, value(ttfb?.targets['bare-proxy'])?.firstByte?.p50);
  bars.push(addedLatencyBar('streaming adds ≤ 1 ms to time to first byte (p50, over the bare proxy)', addedFirstByte, 1));

  const streams = value(results.concurrentStreams?.targets.gateway);
  const peak = mb(streams?.peakRssBytes);
  // The bar holds only if every stream was open at the same moment and every one completed.
  const held = streams !== undefined && streams.peakOpen === streams.streams && streams.completed === streams.streams;
  bars.push({
    bar: `${(streams?.streams ?? 1000).toLocaleString('en-US')} concurrent streams under 250 MB RSS, the tokenizer loaded (all open at once, all completing)`,
    measured:
      peak === null || streams === undefined
        ? '—'
        : `${peak.toFixed(1)} MB; ${streams.peakOpen} open at once, ${streams.completed}/${streams.streams} completed`,
    met: peak === null ? null : peak < 250 && held,
  });

  for (const id of DIALECT_WORKLOADS) bars.push(dialectCpuBar(results.workloads, id));
  for (const pair of STREAMED_WORKLOADS) bars.push(streamCpuBar(results.workloads, pair));
  for (const { streamed } of STREAMED_WORKLOADS) bars.push(pacedP99Bar(results.workloads, streamed, results.settings.pacedRate, STREAM_P99_BOUND_MS));
  bars.push(...cpuBars(results.workloads));

  const limits = value(results.limitsAb ?? undefined);
  bars.push({
    bar: 'key limits cost ≤ 10 µs CPU per chat request with Redis (A/B median)',
    measured: limits === undefined ? '—' : `${limits.medianMicros.toFixed(1)} µs (counters: ${limits.counters})`,
    met: limits === undefined || limits.counters !== 'redis' ? null : limits.medianMicros <= 10,
  });

  bars.push(...scaleOutBars(value(results.scaleOut ?? undefined)));
  if (results.race) bars.push(...raceBars(results.race));
  const beside = value(results.chatBesideDashboard ?? undefined);
  if (results.chatBesideDashboard) {
    bars.push({
      bar: `chat p99 at ${results.settings.pacedRate} req/s with dashboard reads beside it within 5 % of without`,
      measured: beside ? `× ${beside.p99Ratio.toFixed(3)}` : '—',
      met: beside ? beside.p99Ratio <= BESIDE_BAR : null,
    });
    bars.push({
      bar: 'chat CPU per request with dashboard reads beside it within 5 % of without',
      measured: beside ? `× ${beside.cpuRatio.toFixed(3)}` : '—',
      met: beside ? beside.cpuRatio <= BESIDE_BAR : null,
    });
    bars.push({
      bar: "chat's event loop (main thread) CPU per request with dashboard reads beside it within 5 % of without",
      measured: beside ? `× ${beside.mainThreadCpuRatio.toFixed(3)}` : '—',
      met: beside ? beside.mainThreadCpuRatio <= BESIDE_BAR : null,
    });
  }
  for (const timing of value(results.dashboardUsage ?? undefined)?.timings ?? []) {
    bars.push({
      bar: `dashboard (${timing.engine}) ${timing.what} ≤ ${timing.barMs} ms`,
      measured: `${timing.ms.toFixed(1)} ms`,
      met: timing.ms <= timing.barMs,
    });
  }
  return bars;
}

/** The bars of the scale-out path (docs/performance.md, "The scale-out path" and "One busy account on PostgreSQL"). */
function scaleOutBars(scale: ScaleOutResult | undefined): BarCheck[] {
  type ScaleWorkload = ScaleOutResult['workloads'][number];
  const busy = scale?.workloads.filter((workload) => BUSY_ACCOUNT_WORKLOADS.includes(workload.id));
  const each = (workloads: readonly ScaleWorkload[] | undefined, read: (workload: ScaleWorkload) => string) =>
    workloads === undefined || workloads.length === 0 ? '—' : workloads.map((workload) => `${workload.id} ${read(workload)}`).join(', ');
  const all = (workloads: readonly ScaleWorkload[] | undefined, test: (workload: ScaleWorkload) => boolean) =>
    workloads === undefined || workloads.length === 0 ? null : workloads.every(test);
  const chat = scale?.workloads.find((workload) => workload.id === 'chat');
  // The instance's own CPU per request on each store; PostgreSQL's backends beside it, for the record.
  const postgresCpu = chat?.median.postgres.instanceMicrosPerRequest[0];
  const embeddedCpu = chat?.median.embedded.instanceMicrosPerRequest[0];
  const cpu = ratio(postgresCpu, embeddedCpu);
  const withDatabase = ratio((postgresCpu ?? Number.NaN) + (chat?.median.postgres.databaseMicrosPerRequest ?? Number.NaN), embeddedCpu);
  const unstreamed = scale?.workloads.filter((workload) => UNSTREAMED_WORKLOADS.includes(workload.id));
  return [
    {
      bar: 'one busy account: PostgreSQL throughput ≥ 0.8 × the embedded store (same run)',
      measured: each(busy, (workload) => `${workload.postgresOverEmbedded.toFixed(2)} ×`),
      met: all(busy, (workload) => workload.postgresOverEmbedded >= 0.8),
    },
    {
      bar: 'one busy account: lock waits < 10 % of sampled PostgreSQL backend states',
      measured: each(busy, (workload) => `${(workload.lockWaitShare * 100).toFixed(1)} % (${(workload.lockWaitShareOfActive * 100).toFixed(1)} % of active)`),
      met: all(busy, (workload) => workload.lockWaitShare < 0.1),
    },
    {
      bar: 'one busy account: two PostgreSQL instances serve at least what one does',
      measured: each(busy, (workload) => `${workload.twoOverOne.toFixed(2)} ×`),
      met: all(busy, (workload) => workload.twoOverOne >= 1),
    },
    {
      bar: 'scale-out: the ledger exact after each workload (both stores)',
      measured: each(scale?.workloads, (workload) =>
        Object.entries(workload.ledgerExact)
          .map(([store, verdict]) => `${store} ${verdict === true ? 'exact' : verdict}`)
          .join(' / '),
      ),
      met:
        scale !== undefined && scale.failures.length > 0
          ? false
          : all(scale?.workloads, (workload) => Object.values(workload.ledgerExact).every((verdict) => verdict === true)),
    },
    {
      bar: "scale-out: chat CPU per request on PostgreSQL ≤ 1.5 × the embedded store's (the instance, same run)",
      measured:
        cpu === null
          ? '—'
          : `${cpu.toFixed(2)} × (${Math.round(postgresCpu!)} / ${Math.round(embeddedCpu!)} µs; ` +
            `${withDatabase === null ? '—' : withDatabase.toFixed(2)} × with PostgreSQL's own CPU)`,
      met: cpu === null ? null : cpu <= 1.5,
    },
    {
      bar: 'scale-out: ≤ 3 database round trips per non-streamed request (every statement, at saturation and 500/s, one and two instances)',
      measured: each(unstreamed, (workload) => {
        const most = mostRoundTrips(workload);
        const sequential = typeof workload.sequential === 'string' ? null : workload.sequential.ownRoundTripsPerRequest;
        return `${most === null ? '—' : most.toFixed(2)}${sequential === null ? '' : ` (one at a time ${sequential.toFixed(2)}, its request log row included)`}`;
      }),
      met: all(unstreamed, (workload) => (mostRoundTrips(workload) ?? Number.POSITIVE_INFINITY) <= 3),
    },
  ];
}

/**
 * The most round trips per request a workload took on PostgreSQL under the run's load: saturated
 * or paced, one or two instances. One at a time is printed beside it, not held to the bar: a
 * request then also pays alone for its request log row, written behind (docs/performance.md, "The
 * scale-out path"), which puts it at about 3 with the request path's two, and the idle instance's
 * polls taken out of it leave a noise of a few hundredths.
 */
function mostRoundTrips(workload: ScaleOutResult['workloads'][number]): number | null {
  const figures: (number | null)[] = [];
  for (const setup of ['postgres', 'postgres-2'] as const) {
    figures.push(workload.median[setup].roundTripsPerRequest);
    const paced = workload.paced[setup];
    if (typeof paced !== 'string') figures.push(paced.roundTripsPerRequest);
  }
  const measured = figures.filter((figure) => figure !== null);
  return measured.length === 0 ? null : Math.max(...measured);
}

/** The race's bars: nothing overspent, the ledger exact, every refusal clean; not met when it could not run. */
function raceBars(measured: Measured<RaceResult>): BarCheck[] {
  const race = value(measured);
  const overspent = race
    ? Object.entries(race.overspent)
        .filter(([, over]) => over)
        .map(([what]) => what)
    : [];
  return [
    {
      bar: 'race: four instances, one 1 USD wallet, a key of 0.50 USD and N per minute: zero overspend of any',
      measured: race
        ? `${overspent.length === 0 ? 'none' : `OVERSPENT: ${overspent.join(', ')}`} (wallet ${race.wallet.balance} pico-USD left; key ${race.limitedKey.charged} of ${race.limitedKey.spendLimit}; ${race.limitedKey.admitted} of ${race.limitedKey.allowed} admitted)`
        : `not run: ${measured.ok ? '' : measured.error}`,
      met: race ? overspent.length === 0 : false,
    },
    {
      bar: 'race: the ledger exact to the pico-dollar (one charge per answer, of its stated cost)',
      measured: race ? (race.ledger === true ? 'exact' : race.ledger) : '—',
      met: race ? race.ledger === true : false,
    },
    {
      bar: 'race: every refusal a clean 402 or 429',
      measured: race ? `${race.failures} other answers${race.failureSamples.length > 0 ? `: ${race.failureSamples.join('; ')}` : ''}` : '—',
      met: race ? race.failures === 0 : false,
    },
  ];
}

function raceSection(measured: Measured<RaceResult>): string[] {
  const title = 'the race: four instances on PostgreSQL + Redis, one 1 USD wallet, a key of 0.50 USD with a per-minute limit';
  if (!measured.ok) return [title, `  ! ${measured.error}`, ''];
  const race = measured.value;
  const rows = (['limited', 'plain'] as const).flatMap((key) =>
    Object.entries(race.outcomes[key])
      .sort(([, a], [, b]) => b - a)
      .map(([outcome, count]) => [key, outcome, String(count)]),
  );
  return [
    title,
    `  ${race.placement}; ${race.concurrency} requests at a time; load average ${race.loadAverage[0].toFixed(1)} → ${race.loadAverage[1].toFixed(1)}`,
    table(['key', 'answer', 'count'], rows),
    `  ${describeRace(race)}`,
    ...(race.failures > 0 ? [`  !!! ${race.failures} ANSWERS WERE NEITHER A SUCCESS NOR A CLEAN 402 OR 429: ${race.failureSamples.join('; ')}`] : []),
    '',
  ];
}

function dashboardListsSection(measured: Measured<DashboardListsResult>): string[] {
  const title = 'dashboard lists (a page of 25 through the store: median of 30 reads, ms)';
  if (!measured.ok) return [title, `  ! ${measured.error}`, ''];
  const header = ['store', 'list', 'rows', 'first page', 'deep page'];
  const rows = measured.value.timings.map((timing) => [
    timing.engine,
    timing.list,
    String(timing.rows),
    timing.firstPageMs.toFixed(2),
    timing.deepPageMs.toFixed(2),
  ]);
  return [title, table(header, rows), ''];
}

function dashboardUsageSection(measured: Measured<DashboardUsageResult>): string[] {
  if (!measured.ok) return ['dashboard usage', `  ! ${measured.error}`, ''];
  const usage = measured.value;
  const header = ['store', 'read', 'median ms', 'bar ms', 'met'];
  const rows = usage.timings.map((timing) => [
    timing.engine,
    timing.what,
    timing.ms.toFixed(1),
    String(timing.barMs),
    timing.ms <= timing.barMs ? 'yes' : 'NO',
  ]);
  return [
    `dashboard usage over ${usage.rows} request rows in 30 days (filled in ${usage.fillSeconds.sqlite.toFixed(0)} s on SQLite, ${usage.fillSeconds.postgres.toFixed(0)} s on PostgreSQL; median of 10 reads)`,
    table(header, rows),
    `  ${usage.note}`,
    '',
  ];
}

function besideSection(measured: Measured<ChatBesideDashboardResult>): string[] {
  if (!measured.ok) return ['chat beside the dashboard', `  ! ${measured.error}`, ''];
  const beside = measured.value;
  const header = [
    'round',
    'p99 alone ms',
    'p99 beside ms',
    'CPU alone µs/req',
    'CPU beside µs/req',
    'main thread alone',
    'main thread beside',
    'waiting for the CPU alone',
    'waiting for the CPU beside',
    'dashboard reads',
  ];
  const rows = beside.rounds.map((round, index) => [
    String(index + 1),
    round.alone.p99Ms.toFixed(2),
    round.beside.p99Ms.toFixed(2),
    round.alone.cpuMicrosPerRequest.toFixed(0),
    round.beside.cpuMicrosPerRequest.toFixed(0),
    round.alone.mainThreadMicrosPerRequest.toFixed(0),
    round.beside.mainThreadMicrosPerRequest.toFixed(0),
    percent(round.alone.mainThreadWaitShare),
    percent(round.beside.mainThreadWaitShare),
    String(round.dashboardReads),
  ]);
  const { quieter, busier } = beside.byWait;
  return [
    `chat at ${beside.rate} req/s in one run, cut into slices of ${beside.sliceSeconds} s alone and with dashboard reads looping beside it (${beside.rounds.length} rounds of one slice each); beside ÷ alone over all slices: p99 ${beside.p99Ratio.toFixed(3)}, CPU ${beside.cpuRatio.toFixed(3)}, main thread CPU ${beside.mainThreadCpuRatio.toFixed(3)} (medians of the rounds' ratios: ${beside.roundMedians.p99Ratio.toFixed(3)}, ${beside.roundMedians.cpuRatio.toFixed(3)}, ${beside.roundMedians.mainThreadCpuRatio.toFixed(3)})`,
    `the slices' own p99s: median ${beside.slicesP99.aloneMedianMs.toFixed(2)} ms alone, ${beside.slicesP99.besideMedianMs.toFixed(2)} ms beside; beside higher in ${beside.slicesP99.besideHigherRounds} of ${beside.rounds.length} rounds`,
    `all slices split by how long the main thread waited for the CPU: p99 ${quieter.p99Ms.toFixed(2)} ms in the quieter half (waiting ${percent(quieter.mainThreadWaitShare)} of the time), ${busier.p99Ms.toFixed(2)} ms in the busier half (${percent(busier.mainThreadWaitShare)})`,
    table(header, rows),
    '',
  ];
}

function scaleOutSection(measured: Measured<ScaleOutResult>): string[] {
  const title = 'the scale-out path: one busy account, embedded store against PostgreSQL (one and two instances)';
  if (!measured.ok) return [title, `  ! ${measured.error}`, ''];
  const scale = measured.value;
  const header = [
    'workload',
    'set-up',
    'req/s',
    'CPU µs / req (each instance)',
    'PostgreSQL CPU µs / req',
    'round trips / req',
    `p50 @${scale.pacedRate}/s (ms)`,
    `p99 @${scale.pacedRate}/s (ms)`,
    `round trips / req @${scale.pacedRate}/s`,
    'failed',
  ];
  const whole = (value: number | null | undefined) => (value === null || value === undefined || Number.isNaN(value) ? '—' : String(Math.round(value)));
  const fixed = (value: number | null | undefined, digits: number) => (value === null || value === undefined ? '—' : value.toFixed(digits));
  const rows = scale.workloads.flatMap((workload) =>
    (['embedded', 'postgres', 'postgres-2'] as const).map((setup) => {
      const median = workload.median[setup];
      const paced = workload.paced[setup];
      const instances = median.instanceMicrosPerRequest.map(whole);
      const failed = workload.rounds.reduce((total, round) => total + round[setup].failed, 0) + (typeof paced === 'string' ? 0 : paced.failed);
      return [
        workload.id,
        setup,
        whole(median.requestsPerSecond),
        instances.join(' / '),
        whole(median.databaseMicrosPerRequest),
        fixed(median.roundTripsPerRequest, 2),
        typeof paced === 'string' ? `! ${paced}` : fixed(paced.latency?.p50, 2),
        typeof paced === 'string' ? '' : fixed(paced.latency?.p99, 2),
        typeof paced === 'string' ? '' : fixed(paced.roundTripsPerRequest, 2),
        String(failed),
      ];
    }),
  );
  return [
    title,
    `  ${scale.placement}; counters: ${scale.counters}; medians of ${scale.rounds} rounds of ${scale.seconds} s at 50 connections, then ${scale.pacedSeconds} s at ${scale.pacedRate}/s; load average ${scale.loadAverage[0].toFixed(1)} → ${scale.loadAverage[1].toFixed(1)}`,
    "  (jobs: background responses, counted when ended; their CPU and round trips are the whole job's)",
    table(header, rows),
    ...scale.workloads.map(
      (workload) =>
        `  ${workload.id}: PostgreSQL ${workload.postgresOverEmbedded.toFixed(2)} × embedded, two instances ${workload.twoOverOne.toFixed(2)} × one, ` +
        `lock waits ${(workload.lockWaitShare * 100).toFixed(1)} % of backend states; ` +
        `one at a time: ${typeof workload.sequential === 'string' ? workload.sequential : `${workload.sequential.roundTripsPerRequest?.toFixed(2) ?? '—'} round trips / req (${workload.sequential.ownRoundTripsPerRequest?.toFixed(2) ?? '—'} less an idle instance's)`}; ledger: ` +
        Object.entries(workload.ledgerExact)
          .map(([store, verdict]) => `${store} ${verdict === true ? 'exact' : `NOT EXACT (${verdict})`}`)
          .join(', '),
    ),
    ...scale.failures.map((failure) => `  ! ${failure.id} NOT MEASURED: ${failure.error}`),
    '',
  ];
}

function longOperationsSection(measured: Measured<LongOperationsResult>): string[] {
  const title = 'long operations (gateway, default job slots: video generations of a minute in flight beside background responses)';
  if (!measured.ok) return [title, `error: ${measured.error}`, ''];
  const value = measured.value;
  const mb = (bytes: number | null) => (bytes === null ? '—' : (bytes / 2 ** 20).toFixed(0));
  const rows = [
    ['videos in flight (seconds each)', `${value.videos} (${value.videoSeconds} s), submitted in ${value.submitSeconds.toFixed(1)} s`],
    [
      'background responses alone: queued → completed p50 / p99',
      `${value.responsesAlone.p50Ms} / ${value.responsesAlone.p99Ms} ms (${value.responsesAlone.count})`,
    ],
    ['the same with the videos in flight', `${value.responsesWithVideos.p50Ms} / ${value.responsesWithVideos.p99Ms} ms (${value.responsesWithVideos.count})`],
    [
      `another account's response behind a backlog of ${value.backlog} × 500 ms`,
      `${value.otherAccountMs} ms (the backlog drained in ${value.backlogSeconds.toFixed(1)} s)`,
    ],
    [
      'video steps (start or look) in the quiet window',
      `${value.windowSteps}, ${value.cpuMicrosPerStep === null ? '—' : value.cpuMicrosPerStep.toFixed(0)} µs CPU each`,
    ],
    ['RSS with the videos in flight / peak', `${mb(value.rssBytesWithVideos)} / ${mb(value.peakRssBytes)} MB`],
    ['every video ended after', `${value.videosEndedSeconds.toFixed(1)} s, ${value.videosNotCompleted} not completed`],
  ];
  return [title, table(['measure', 'value'], rows), ''];
}
