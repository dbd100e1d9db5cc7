/**
 * The concurrency test: many streams open at the same time through one process, each held open by
 * the simulator's slow `/hold/{ms}` pace, while the process's resident memory is watched. A stream
 * counts as complete when it ends with status 200 and its terminator (`[DONE]` or `message_stop`).
 */
import { Pool } from 'undici';
import { MemoryWatch } from './processes.ts';
import type { Endpoint } from './request-spec.ts';

export interface ConcurrentStreamsResult {
  readonly streams: number;
  /** Streams that received their first event. */
  readonly opened: number;
  /** The most streams open at the same moment (first event received, end not yet). */
  readonly peakOpen: number;
  readonly completed: number;
  readonly failed: number;
  /** Milliseconds from the first request until every stream had received its first event (null if some never did). */
  readonly allStartedAfterMs: number | null;
  /** Resident memory of the process when the last stream received its first event, and the peak over the test. */
  readonly rssAllStartedBytes: number | null;
  readonly peakRssBytes: number | null;
  readonly durationMs: number;
}

/** Connections are opened in small batches: a burst of 1,000 SYNs would overflow a default listen backlog. */
const BATCH = 100;
const BATCH_GAP_MS = 20;
const TERMINATORS = ['[DONE]', 'message_stop'];

export async function runConcurrentStreams(
  endpoint: Endpoint,
  options: { readonly streams: number; readonly pid: number; readonly timeoutMs: number },
): Promise<ConcurrentStreamsResult> {
  const pool = new Pool(endpoint.origin, { connections: options.streams, pipelining: 1, keepAliveTimeout: 60_000 });
  const memory = new MemoryWatch(options.pid, 50);
  const { method, path, headers, body } = endpoint.request;
  const startedAt = performance.now();
  const signal = AbortSignal.timeout(options.timeoutMs);
  let opened = 0;
  let open = 0;
  let peakOpen = 0;
  let completed = 0;
  let failed = 0;
  let allStartedAfterMs: number | null = null;
  let rssAllStartedBytes: number | null = null;

  const one = async () => {
    let counted = false;
    try {
      const response = await pool.request({ method, path, headers, body, signal });
      let tail = '';
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        if (!counted) {
          counted = true;
          opened += 1;
          open += 1;
          if (open > peakOpen) peakOpen = open;
          if (opened === options.streams) {
            allStartedAfterMs = performance.now() - startedAt;
            rssAllStartedBytes = memory.now();
          }
        }
        tail = (tail + chunk.toString('utf8')).slice(-64);
      }
      if (response.statusCode === 200 && TERMINATORS.some((terminator) => tail.includes(terminator))) completed += 1;
      else failed += 1;
    } catch {
      failed += 1;
    } finally {
      if (counted) open -= 1;
    }
  };

  try {
    const all: Promise<void>[] = [];
    for (let index = 0; index < options.streams; index += 1) {
      if (index > 0 && index % BATCH === 0) await new Promise((resolve) => setTimeout(resolve, BATCH_GAP_MS));
      all.push(one());
    }
    await Promise.all(all);
    return {
      streams: options.streams,
      opened,
      peakOpen,
      completed,
      failed,
      allStartedAfterMs,
      rssAllStartedBytes,
      peakRssBytes: memory.stop(),
      durationMs: performance.now() - startedAt,
    };
  } finally {
    memory.stop();
    await pool.destroy();
  }
}
