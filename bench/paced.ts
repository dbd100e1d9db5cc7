/**
 * Open-loop load at a fixed rate: request i leaves at start + i / rate, whether or not earlier
 * answers have arrived, and each request's latency runs from the moment it was sent to the end of
 * its answer.
 *
 * autocannon's own rate limit is not used for this: it lets each connection send its whole
 * per-second quota back to back at the start of every second, so "500 req/s" would really be a
 * burst of 500 requests followed by silence, and the p99 would measure that burst's queue.
 *
 * Given several endpoints (instances of one set-up), request i goes to endpoint i mod n, and the
 * latencies of all of them make one summary.
 */
import { Pool } from 'undici';
import type { Endpoint } from './request-spec.ts';
import { SampleBuffer, summarize, type LatencySummary } from './stats.ts';

export interface PacedResult {
  readonly rate: number;
  readonly sent: number;
  readonly completed: number;
  readonly failed: number;
  /** The rate the sender actually achieved (timer jitter can make it slightly lower). */
  readonly achievedRate: number;
  readonly latency: LatencySummary | null;
}

export async function runPaced(
  endpoint: Endpoint | readonly Endpoint[],
  options: {
    readonly rate: number;
    readonly durationSeconds: number;
    readonly timeoutMs: number;
    /** Told of every answer: when its request left (performance.now()) and its latency, null for a failure. */
    readonly onAnswer?: (sentAt: number, latencyMs: number | null) => void;
    /** Ends the sending before `durationSeconds` when it resolves. */
    readonly stop?: Promise<void>;
  },
): Promise<PacedResult> {
  const endpoints: readonly Endpoint[] = Array.isArray(endpoint) ? endpoint : [endpoint as Endpoint];
  // Enough connections that a slow answer never delays the next request's departure.
  const pools = endpoints.map((each) => new Pool(each.origin, { connections: 256, pipelining: 1, keepAliveTimeout: 60_000 }));
  const samples = new SampleBuffer();
  const total = Math.max(1, Math.round(options.rate * options.durationSeconds));
  const intervalMs = 1000 / options.rate;
  let sent = 0;
  let completed = 0;
  let failed = 0;
  const inFlight = new Set<Promise<void>>();

  const fire = () => {
    const sentAt = performance.now();
    const { method, path, headers, body } = endpoints[sent % endpoints.length].request;
    const exchange = pools[sent % pools.length]
      .request({ method, path, headers, body })
      .then(async (response) => {
        await response.body.dump({ limit: Number.MAX_SAFE_INTEGER });
        if (response.statusCode >= 200 && response.statusCode < 300) {
          completed += 1;
          const latency = performance.now() - sentAt;
          samples.push(latency);
          options.onAnswer?.(sentAt, latency);
        } else {
          failed += 1;
          options.onAnswer?.(sentAt, null);
        }
      })
      .catch(() => {
        failed += 1;
        options.onAnswer?.(sentAt, null);
      });
    inFlight.add(exchange);
    void exchange.finally(() => inFlight.delete(exchange));
  };

  let stopped = false;
  void options.stop?.then(() => {
    stopped = true;
  });
  const startedAt = performance.now();
  try {
    await new Promise<void>((resolve) => {
      const tick = () => {
        if (stopped) return resolve();
        const due = Math.min(total, Math.floor((performance.now() - startedAt) / intervalMs) + 1);
        while (sent < due) {
          fire();
          sent += 1;
        }
        if (sent >= total) return resolve();
        setTimeout(tick, Math.max(0, startedAt + sent * intervalMs - performance.now()));
      };
      tick();
    });
    const sendingMs = performance.now() - startedAt;
    const drained = Promise.all(inFlight);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), options.timeoutMs);
    });
    const outcome = await Promise.race([drained, timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') throw new Error(`paced run: ${inFlight.size} answers still pending after ${options.timeoutMs} ms`);
    return {
      rate: options.rate,
      sent,
      completed,
      failed,
      achievedRate: sent > 1 && sendingMs > 0 ? (sent - 1) / (sendingMs / 1000) : options.rate,
      latency: summarize(samples.values()),
    };
  } finally {
    await Promise.all(pools.map((pool) => pool.destroy()));
  }
}
