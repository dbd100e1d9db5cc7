/**
 * An upstream that replays recorded answers: each request gets the next scripted answer, a JSON body
 * with its status, or an SSE body sent exactly as written (event for event, byte for byte), so a
 * provider's real stream — its event order, field shapes and errors — reaches the gateway unchanged.
 * The protocol simulators beside this file generate answers; this one only repeats them.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ReplayAnswer =
  | { readonly status?: number; readonly json: unknown }
  /** Raw SSE text; `chunks` splits it into that many writes (a reader must join events across them). */
  | { readonly status?: number; readonly sse: string; readonly chunks?: number }
  /** A body sent as it is (truncated JSON, say), with a JSON content type. */
  | { readonly status?: number; readonly raw: string };

export interface ReplayedRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: any;
}

export interface ReplayUpstream {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  readonly requests: ReplayedRequest[];
  /** Queues answers for the next requests, in order. */
  script(...answers: ReplayAnswer[]): void;
  /** Answers not yet taken (a test checks that its script was used up). */
  pending(): number;
  close(): Promise<void>;
}

export async function startReplayUpstream(): Promise<ReplayUpstream> {
  const queue: ReplayAnswer[] = [];
  const requests: ReplayedRequest[] = [];
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      requests.push({ path: incoming.url ?? '', headers: incoming.headers, body });
      const answer = queue.shift();
      if (answer === undefined) {
        response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"no answer scripted"}}');
        return;
      }
      void send(answer, response);
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    script: (...answers) => queue.push(...answers),
    pending: () => queue.length,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function send(answer: ReplayAnswer, response: import('node:http').ServerResponse): Promise<void> {
  const status = answer.status ?? 200;
  if ('json' in answer) {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.json));
    return;
  }
  if ('raw' in answer) {
    response.writeHead(status, { 'content-type': 'application/json' }).end(answer.raw);
    return;
  }
  response.writeHead(status, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const pieces = Math.max(1, answer.chunks ?? 1);
  const size = Math.ceil(answer.sse.length / pieces);
  for (let offset = 0; offset < answer.sse.length; offset += size) {
    // Each piece is its own write after the previous one drained: the gateway reads them apart.
    if (!response.write(answer.sse.slice(offset, offset + size))) await new Promise((resolve) => response.once('drain', resolve));
    await new Promise((resolve) => setImmediate(resolve));
  }
  response.end();
}
