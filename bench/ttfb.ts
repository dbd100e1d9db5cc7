/**
 * Time to first byte of a stream, one request at a time on one keep-alive connection: from sending
 * the request to receiving the first body bytes, and to the end of the stream. The simulator's
 * `/first/{ms}` pace sends the opening events up to the first text at once and the rest {ms} later,
 * so the first byte measures how fast the process in front of it relays the first text, not the
 * whole stream.
 */
import { Client } from 'undici';
import type { Endpoint } from './request-spec.ts';
import { SampleBuffer, summarize, type LatencySummary } from './stats.ts';

export interface TtfbResult {
  readonly requests: number;
  readonly failed: number;
  readonly firstByte: LatencySummary | null;
  readonly complete: LatencySummary | null;
}

export async function measureTtfb(
  endpoint: Endpoint,
  options: { readonly requests: number; readonly warmup: number; readonly timeoutMs: number },
): Promise<TtfbResult> {
  const client = new Client(endpoint.origin, { keepAliveTimeout: 60_000 });
  const firstByte = new SampleBuffer();
  const complete = new SampleBuffer();
  const { method, path, headers, body } = endpoint.request;
  const deadline = Date.now() + options.timeoutMs;
  let failed = 0;
  try {
    for (let index = 0; index < options.warmup + options.requests; index += 1) {
      if (Date.now() > deadline) throw new Error(`time-to-first-byte run exceeded ${options.timeoutMs} ms`);
      const sentAt = performance.now();
      const response = await client.request({ method, path, headers, body, signal: AbortSignal.timeout(10_000) });
      let first: number | undefined;
      for await (const _chunk of response.body) first ??= performance.now();
      const done = performance.now();
      if (index < options.warmup) continue;
      if (response.statusCode !== 200 || first === undefined) {
        failed += 1;
        continue;
      }
      firstByte.push(first - sentAt);
      complete.push(done - sentAt);
    }
  } finally {
    await client.destroy();
  }
  return { requests: options.requests, failed, firstByte: summarize(firstByte.values()), complete: summarize(complete.values()) };
}
