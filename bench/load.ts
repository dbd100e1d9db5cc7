/**
 * Closed-loop load with autocannon's programmatic API: N connections, each sending its next request
 * as soon as the previous answer ends. 50 connections give the saturation throughput; 1 connection
 * gives the latency of a request with nothing else in flight.
 *
 * Latencies are taken from autocannon's per-response event (a float in milliseconds from
 * process.hrtime) rather than from its summary histogram, which keeps whole milliseconds only:
 * the differences this benchmark looks at are tenths of a millisecond.
 */
import autocannon from 'autocannon';
import { cpuSeconds } from './processes.ts';
import type { Endpoint } from './request-spec.ts';
import { SampleBuffer, summarize, type LatencySummary } from './stats.ts';

export interface ClosedLoopResult {
  readonly connections: number;
  readonly durationSeconds: number;
  /** 2xx answers completed inside the measured window. */
  readonly completed: number;
  /** 2xx answers over the whole run, the ramp-up and the stop included (to divide CPU time by). */
  readonly completedInRun: number;
  readonly requestsPerSecond: number;
  /** Answers that were not 2xx, and transport errors or timeouts, over the whole run. */
  readonly non2xx: number;
  readonly errors: number;
  readonly latency: LatencySummary | null;
}

export async function runClosedLoop(
  endpoint: Endpoint,
  options: { readonly connections: number; readonly durationSeconds: number; readonly timeoutMs: number },
): Promise<ClosedLoopResult> {
  const samples = new SampleBuffer();
  let measuring = false;
  let completed = 0;
  let completedInRun = 0;
  let non2xx = 0;
  let errors = 0;
  let windowMs = options.durationSeconds * 1000;

  const run = new Promise<void>((resolve, reject) => {
    let guard: NodeJS.Timeout | undefined;
    const instance = autocannon(
      {
        url: endpoint.origin + endpoint.request.path,
        method: endpoint.request.method,
        headers: { ...endpoint.request.headers },
        body: endpoint.request.body,
        connections: options.connections,
        pipelining: 1,
        duration: options.durationSeconds,
        timeout: 10,
        // autocannon notices the end of its duration only on a sample tick: keep the overrun short.
        sampleInt: 100,
      },
      (error) => {
        clearTimeout(guard);
        if (error) reject(error);
        else resolve();
      },
    );
    // The window is measured here rather than trusted from autocannon, whose end is a sample tick.
    let startedAt = 0;
    instance.on('start', () => {
      measuring = true;
      startedAt = performance.now();
      setTimeout(() => {
        measuring = false;
        windowMs = performance.now() - startedAt;
      }, options.durationSeconds * 1000);
    });
    instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
      if (statusCode < 200 || statusCode >= 300) {
        non2xx += 1;
        return;
      }
      completedInRun += 1;
      if (!measuring) return;
      completed += 1;
      samples.push(responseTimeMs);
    });
    instance.on('reqError', () => {
      errors += 1;
    });
    guard = setTimeout(() => {
      instance.stop();
      reject(new Error(`load run did not finish within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
  });
  await run;
  return {
    connections: options.connections,
    durationSeconds: windowMs / 1000,
    completed,
    completedInRun,
    requestsPerSecond: completed / (windowMs / 1000),
    non2xx,
    errors,
    latency: summarize(samples.values()),
  };
}

/**
 * A closed-loop run with the CPU the process `pid` spent on it: µs per answered request, user and
 * kernel, all its threads. Throws when an answer was not a 2xx.
 */
export async function cpuPerAnswer(
  pid: number,
  endpoint: Endpoint,
  options: { readonly connections: number; readonly durationSeconds: number; readonly timeoutMs: number },
): Promise<{ readonly run: ClosedLoopResult; readonly micros: number }> {
  const before = cpuSeconds(pid)!;
  const run = await runClosedLoop(endpoint, options);
  const after = cpuSeconds(pid)!;
  if (run.non2xx > 0 || run.errors > 0) throw new Error(`${run.non2xx} answers were not 2xx, ${run.errors} errors`);
  return { run, micros: ((after.user + after.system - before.user - before.system) * 1e6) / run.completedInRun };
}
