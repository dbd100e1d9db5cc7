/**
 * A webhook receiver on loopback for the delivery tests: records every request (headers and raw
 * body) and answers each with the status its script gives, or never (a receiver that hangs).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** The answer to the n-th request (0-based): a status, or 'hang' to never answer. */
export type Script = (index: number) => number | 'hang';

export interface Receiver {
  /** `http://127.0.0.1:PORT/hook` */
  readonly url: string;
  readonly port: number;
  readonly received: readonly ReceivedRequest[];
  /** Resolves once `count` requests have arrived; fails after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<readonly ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(script: Script = () => 200): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const index = received.length;
      received.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      for (const wake of waiters) wake();
      const answer = script(index);
      if (answer === 'hang') return;
      response.writeHead(answer, { 'content-type': 'text/plain' }).end(answer < 300 ? 'ok' : 'not now');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    waitFor(count, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (received.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(received);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the receiver got ${received.length} of ${count} requests within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `read` until `done` holds for its value; fails with the last value after `timeoutMs`. */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
