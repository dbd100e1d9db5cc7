/**
 * Command-line options of `npm run bench` and the durations of each phase. The full run takes about
 * 25 minutes; `--only` runs some parts of it, and `--quick` is a smoke run of every part whose figures
 * are only indicative.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { WORKLOADS, type WorkloadId } from './workloads.ts';

export interface Durations {
  /** Closed-loop warm-up of each target before its saturation run (JIT, connection pools). */
  readonly warmupSeconds: number;
  /**
   * Load on each process under test before the first workload is measured, in slices of
   * `warmupSeconds` over every selected workload (bench/run.ts, warmUp).
   */
  readonly startWarmupSeconds: number;
  readonly saturationSeconds: number;
  readonly concurrencyOneSeconds: number;
  readonly pacedSeconds: number;
  /** Sequential streams measured for time-to-first-byte, after a few discarded ones. */
  readonly ttfbRequests: number;
  readonly ttfbWarmup: number;
  /** Pause of the simulator after the opening events of a stream (time to first byte). */
  readonly firstGapMs: number;
  /** Pause between events of the held streams; 23 events make each stream last 22 × this. */
  readonly holdMs: number;
}

export interface BenchOptions {
  readonly quick: boolean;
  readonly workloads: readonly WorkloadId[];
  /** Whether the many-open-streams test runs. */
  readonly streamsTest: boolean;
  /** Whether the background-job throughput test runs. */
  readonly jobsTest: boolean;
  /** Video jobs on the simulated provider (`videos` in `--only`). */
  readonly videosTest: boolean;
  /** Key limits A/B (`limits` in `--only`; bench/limits-ab.ts). */
  readonly limitsTest: boolean;
  /** One busy account on PostgreSQL against the embedded store (`scale` in `--only`; bench/scale-out.ts). */
  readonly scaleTest: boolean;
  /** Four instances racing for one wallet and one key's limits (`race` in `--only`; bench/race.ts). */
  readonly raceTest: boolean;
  /** The dashboard's lists at two sizes on both stores (`dashboard` in `--only`; bench/dashboard-lists.ts). */
  readonly dashboardTest: boolean;
  readonly pin: boolean;
  /** Fixed delay the simulator adds before every answer. */
  readonly upstreamDelayMs: number;
  /** Where the gateway's temporary data directory is created; undefined for the OS temp dir. */
  readonly dataRoot: string | undefined;
  /** Directory for the gateway's --cpu-prof profile; undefined when not profiling. */
  readonly cpuProfileDir: string | undefined;
  readonly durations: Durations;
  /** Connections of the saturation runs. */
  readonly saturationConnections: number;
  /** Offered rate of the open-loop latency runs. */
  readonly pacedRate: number;
  /** Streams held open at once in the concurrency test. */
  readonly concurrentStreams: number;
  /** The run stops after this long, whatever hangs, and reports what it measured until then. */
  readonly timeLimitMinutes: number;
  /** Where latest.json is written. */
  readonly resultsDir: string;
}

const FULL: Durations = {
  warmupSeconds: 1,
  startWarmupSeconds: 10,
  saturationSeconds: 5,
  concurrencyOneSeconds: 3,
  // 4,000 requests: a p99 is then the 40th slowest, not the 15th, and one stall moves it less.
  pacedSeconds: 8,
  ttfbRequests: 300,
  ttfbWarmup: 30,
  firstGapMs: 10,
  holdMs: 400,
};

const QUICK: Durations = {
  warmupSeconds: 0.2,
  startWarmupSeconds: 0.6,
  saturationSeconds: 0.5,
  concurrencyOneSeconds: 0.3,
  pacedSeconds: 0.4,
  ttfbRequests: 50,
  ttfbWarmup: 10,
  firstGapMs: 10,
  holdMs: 150,
};

const RESULTS_DIR = fileURLToPath(new URL('results', import.meta.url));

/** Time limits of a run by default, about twice what each took on the benchmark's 2-core machine. */
const TIME_LIMIT_MINUTES = { full: 60, quick: 12 } as const;

export const USAGE = `usage: npm run bench -- [--quick] [--only=chat,models,…] [--no-pin] [--upstream-delay-ms=N] [--data-root=DIR] [--cpu-prof=DIR] [--time-limit=MINUTES]
                 [--results-dir=DIR]
  --quick               smoke run of every part, about 6 minutes (figures only indicative)
  --only=IDS            workloads to run: ${WORKLOADS.map((workload) => workload.id).join(', ')}, streams, jobs, videos, limits, scale, race, dashboard
  --no-pin              do not pin processes to cores with taskset
  --upstream-delay-ms   fixed delay the simulator adds before every answer (default 0)
  --data-root=DIR       create the gateway's temporary data directory (SQLite file) in DIR
                        (default: the OS temp dir); put it on the disk you mean to measure
  --cpu-prof=DIR        run the gateway with --cpu-prof and write its profile into DIR
  --time-limit=MINUTES  stop the run after this long and report what it measured until then
                        (default: ${TIME_LIMIT_MINUTES.full}; ${TIME_LIMIT_MINUTES.quick} with --quick)
  --results-dir=DIR     write latest.json into DIR (default: bench/results)`;

export function parseOptions(argv: readonly string[]): BenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      'no-pin': { type: 'boolean', default: false },
      'upstream-delay-ms': { type: 'string', default: '0' },
      'data-root': { type: 'string' },
      'cpu-prof': { type: 'string' },
      'time-limit': { type: 'string' },
      'results-dir': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const known = new Set<string>([...WORKLOADS.map((workload) => workload.id), 'streams', 'jobs', 'videos', 'limits', 'scale', 'race', 'dashboard']);
  const selected =
    values.only === undefined
      ? [...known]
      : values.only
          .split(',')
          .map((id) => id.trim())
          .filter((id) => id !== '');
  for (const id of selected) if (!known.has(id)) throw new Error(`unknown workload '${id}'\n${USAGE}`);
  const delay = Number(values['upstream-delay-ms']);
  if (!Number.isInteger(delay) || delay < 0) throw new Error(`--upstream-delay-ms must be a whole number of milliseconds\n${USAGE}`);
  const timeLimit = values['time-limit'] === undefined ? TIME_LIMIT_MINUTES[values.quick ? 'quick' : 'full'] : Number(values['time-limit']);
  if (!(timeLimit > 0)) throw new Error(`--time-limit must be a number of minutes above 0\n${USAGE}`);
  return {
    quick: values.quick,
    workloads: WORKLOADS.map((workload) => workload.id).filter((id) => selected.includes(id)),
    streamsTest: selected.includes('streams'),
    jobsTest: selected.includes('jobs'),
    videosTest: selected.includes('videos'),
    limitsTest: selected.includes('limits'),
    scaleTest: selected.includes('scale'),
    raceTest: selected.includes('race'),
    dashboardTest: selected.includes('dashboard'),
    pin: !values['no-pin'],
    upstreamDelayMs: delay,
    dataRoot: values['data-root'] === undefined ? undefined : resolve(values['data-root']),
    cpuProfileDir: values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']),
    durations: values.quick ? QUICK : FULL,
    saturationConnections: 50,
    pacedRate: 500,
    concurrentStreams: 1000,
    timeLimitMinutes: timeLimit,
    resultsDir: resolve(values['results-dir'] ?? RESULTS_DIR),
  };
}
