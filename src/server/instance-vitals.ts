/**
 * What this instance reports of itself with its heartbeat (InstanceStore.reportVitals) and on the
 * dashboard's health page: its version, start, jobs running against its slots, and the event
 * loop's delay, measured by node's own histogram and started afresh every minute so that it says
 * how the loop does now, not since the start.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Jobs } from '../jobs/jobs.ts';
import type { InstanceVitals } from '../storage/store.ts';

const WINDOW_MS = 60_000;
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export function instanceVitals(jobs: Jobs, now: () => number): () => InstanceVitals {
  const startedAt = now() - Math.round(process.uptime() * 1000);
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let windowStart = now();
  const millis = (nanoseconds: number) => Math.round(nanoseconds / 1e4) / 100;
  return () => {
    const delay =
      histogram.count === 0
        ? { p50: 0, p99: 0, max: 0 }
        : { p50: millis(histogram.percentile(50)), p99: millis(histogram.percentile(99)), max: millis(histogram.max) };
    if (now() - windowStart >= WINDOW_MS) {
      histogram.reset();
      windowStart = now();
    }
    return { version: VERSION, startedAt, jobsRunning: jobs.runner.runningCount, jobSlots: jobs.settings.concurrency, eventLoopDelayMs: delay };
  };
}
