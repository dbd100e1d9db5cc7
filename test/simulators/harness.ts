/**
 * A loopback HTTP server for upstream simulators, with scripted fault injection.
 *
 * A simulator (one per protocol, beside this file) supplies three things: how to answer a
 * well-formed request (`handle`, which replies through `reply.json` or `reply.sse`), its provider's
 * error body for a status fault, and its provider's in-stream error event. The harness records every
 * request and applies faults around the simulator's answer, so each simulator stays a plain
 * description of its wire format.
 *
 * Faults are a queue of behaviours, one taken per request (`sim.enqueue({kind:'status',status:500})`
 * makes the next request fail and the one after succeed); `sim.setDefault(...)` sets what happens
 * once the queue is empty (initially `normal`).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: string;
  /** The body's bytes (a multipart upload). */
  readonly rawBytes: Buffer;
  /** The body parsed as JSON; undefined when empty or not JSON. */
  readonly body: any;
}

/** One SSE block: `event:` line when named, then the data (objects are JSON-encoded). */
export interface SseEvent {
  readonly event?: string;
  readonly data: string | object;
}

/**
 * What to do with one request. Stream faults count the SSE events written before the fault; on a
 * JSON answer, `reset` closes the socket without answering, `malformed` and `truncate` send broken
 * JSON, `retype` sends valid JSON with one field wrong, `stall` sends only the headers, and
 * `stream-error` has no effect.
 */
export type Behaviour =
  | { readonly kind: 'normal' }
  /** Answer with this status, the provider's error body, and extra headers (e.g. retry-after). */
  | { readonly kind: 'status'; readonly status: number; readonly message?: string; readonly headers?: Readonly<Record<string, string>> }
  /** Wait before sending headers (to exercise timeouts), then answer normally. */
  | { readonly kind: 'delay'; readonly ms: number }
  /** Close the socket after N stream events. */
  | { readonly kind: 'reset'; readonly afterEvents: number }
  /** Insert a chunk that is not valid JSON after N stream events, then carry on. */
  | { readonly kind: 'malformed'; readonly afterEvents: number }
  /** End the body cleanly after N stream events, without the rest or the terminator. */
  | { readonly kind: 'truncate'; readonly afterEvents: number }
  /** Send the headers and N stream events, then nothing: the connection stays open and silent. */
  | { readonly kind: 'stall'; readonly afterEvents: number }
  /** Send the provider's in-stream error event after N stream events, then end. */
  | { readonly kind: 'stream-error'; readonly afterEvents: number; readonly message?: string }
  /**
   * Answer the JSON body with the field at `path` set to `value` (created when absent): a
   * well-formed answer whose field has the wrong type or an impossible value. No effect on streams.
   */
  | { readonly kind: 'retype'; readonly path: readonly (string | number)[]; readonly value: unknown };

export interface Reply {
  json(status: number, body: unknown, headers?: Readonly<Record<string, string>>): void;
  /** A binary answer (an image file); faults other than `reset` do not apply to it. */
  bytes(status: number, body: Buffer, contentType: string): void;
  /** Writes the events (terminator included, if the protocol has one) and ends the body. */
  sse(events: readonly SseEvent[]): Promise<void>;
}

export interface SimulatorDefinition {
  handle(request: RecordedRequest, reply: Reply): void | Promise<void>;
  errorBody(status: number, message: string): object;
  /** `eventsWritten` lets a format that numbers its events (Responses' sequence_number) continue the count. */
  streamErrorEvent(message: string, eventsWritten: number): SseEvent;
}

export interface Simulator {
  /** `http://127.0.0.1:<port>` (no path). */
  readonly origin: string;
  readonly requests: RecordedRequest[];
  /** The requests whose answer did not end: the client went away (an aborted upstream call), or a fault cut it. */
  readonly abandoned: RecordedRequest[];
  /** How many connections the simulator has accepted: a client that keeps connections alive opens few. */
  connectionsAccepted(): number;
  /**
   * Bytes the simulator has written to its connections so far (each answer waits for a write to
   * leave the process before the next): what a reader of its answers could have taken.
   */
  bytesSent(): number;
  /**
   * Whether one of its connections holds bytes that the kernel would not take: the reader's socket
   * buffers are full and the simulator's writes wait. The sign that a reader pushes back.
   */
  backlogged(): boolean;
  enqueue(...behaviours: Behaviour[]): void;
  /** Forgets the behaviours not taken yet: a test that failed midway leaves none to the next one. */
  clearQueue(): void;
  setDefault(behaviour: Behaviour): void;
  /** Drops every connection and stops listening: connections are refused until goOnline(). Nothing the simulator knows is forgotten. */
  goOffline(): Promise<void>;
  /** Listens again, on the same port. */
  goOnline(): Promise<void>;
  /** A provider restart: every connection dropped, then listening again, the next `unavailable` requests answered 503 while it warms up. */
  restart(unavailable?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startSimulator(definition: SimulatorDefinition): Promise<Simulator> {
  const queue: Behaviour[] = [];
  let fallback: Behaviour = { kind: 'normal' };
  const requests: RecordedRequest[] = [];
  const abandoned: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();

  const server = createServer((incoming, response) => {
    void readRequest(incoming).then(async (request) => {
      requests.push(request);
      response.on('close', () => {
        if (!response.writableFinished) abandoned.push(request);
      });
      const behaviour = queue.shift() ?? fallback;
      try {
        await serve(definition, behaviour, request, response, timers);
      } catch (error) {
        if (!response.headersSent) response.writeHead(500).end(String(error));
        else response.destroy();
      }
    });
  });
  // The gateway's client reuses an idle connection until shortly before the server's advertised
  // keep-alive ends; on a busy machine timers run late and a reused connection can be one the server
  // is closing (a reset, answered 502). A minute of keep-alive outlasts every test's idle moments.
  server.keepAliveTimeout = 60_000;
  let accepted = 0;
  /** Bytes written by connections already closed. */
  let closedBytes = 0;
  server.on('connection', (socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      closedBytes += socket.bytesWritten;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const goOffline = async () => {
    for (const timer of timers) clearTimeout(timer);
    for (const socket of sockets) socket.destroy();
    if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  const goOnline = async () => {
    if (!server.listening) await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  };

  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    abandoned,
    connectionsAccepted: () => accepted,
    bytesSent: () => [...sockets].reduce((total, socket) => total + socket.bytesWritten, closedBytes),
    backlogged: () => [...sockets].some((socket) => socket.writableLength > 0),
    enqueue: (...behaviours) => queue.push(...behaviours),
    clearQueue: () => {
      queue.length = 0;
    },
    setDefault: (behaviour) => {
      fallback = behaviour;
    },
    goOffline,
    goOnline,
    restart: async (unavailable = 0) => {
      await goOffline();
      await goOnline();
      queue.unshift(...Array.from({ length: unavailable }, (): Behaviour => ({ kind: 'status', status: 503, message: 'Restarting' })));
    },
    close: goOffline,
  };
}

/** Serialises events as SSE text, exactly as the simulators put them on the wire (fixtures use it too). */
export function formatSse(events: readonly SseEvent[]): string {
  return events.map(formatEvent).join('');
}

function formatEvent(event: SseEvent): string {
  const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
  return `${event.event === undefined ? '' : `event: ${event.event}\n`}data: ${data}\n\n`;
}

async function serve(
  definition: SimulatorDefinition,
  behaviour: Behaviour,
  request: RecordedRequest,
  response: ServerResponse,
  timers: Set<NodeJS.Timeout>,
): Promise<void> {
  switch (behaviour.kind) {
    case 'status': {
      const body = JSON.stringify(definition.errorBody(behaviour.status, behaviour.message ?? `Simulated status ${behaviour.status}`));
      response.writeHead(behaviour.status, { 'content-type': 'application/json', ...behaviour.headers }).end(body);
      return;
    }
    case 'delay':
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          resolve();
        }, behaviour.ms);
        timers.add(timer);
      });
      if (response.destroyed) return;
      await definition.handle(request, replyFor(definition, { kind: 'normal' }, response));
      return;
    case 'normal':
    case 'reset':
    case 'malformed':
    case 'truncate':
    case 'stall':
    case 'stream-error':
    case 'retype':
      await definition.handle(request, replyFor(definition, behaviour, response));
      return;
    default: {
      const unknown: never = behaviour;
      throw new Error(`unknown behaviour ${JSON.stringify(unknown)}`);
    }
  }
}

type StreamBehaviour = Extract<Behaviour, { kind: 'normal' | 'reset' | 'malformed' | 'truncate' | 'stall' | 'stream-error' | 'retype' }>;

function replyFor(definition: SimulatorDefinition, behaviour: StreamBehaviour, response: ServerResponse): Reply {
  return {
    json(status, body, headers) {
      const text = JSON.stringify(body);
      switch (behaviour.kind) {
        case 'reset':
          response.destroy();
          return;
        case 'malformed':
          response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(`${text.slice(0, -1)},}`);
          return;
        case 'truncate':
          response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text.slice(0, Math.floor(text.length / 2)));
          return;
        case 'stall':
          response.writeHead(status, { 'content-type': 'application/json', ...headers }).flushHeaders();
          return;
        case 'normal':
        case 'stream-error':
          response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text);
          return;
        case 'retype':
          response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(retyped(body, behaviour.path, behaviour.value)));
          return;
        default: {
          const unknown: never = behaviour;
          throw new Error(`unknown behaviour ${JSON.stringify(unknown)}`);
        }
      }
    },
    bytes(status, body, contentType) {
      if (behaviour.kind === 'reset') response.destroy();
      else response.writeHead(status, { 'content-type': contentType, 'content-length': body.length }).end(body);
    },
    async sse(events) {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      for (let written = 0; written <= events.length; written++) {
        if (response.destroyed) return;
        if (behaviour.kind !== 'normal' && behaviour.kind !== 'retype' && written === behaviour.afterEvents) {
          switch (behaviour.kind) {
            case 'reset':
              await write(response, '');
              response.destroy();
              return;
            case 'truncate':
              response.end();
              return;
            case 'stall':
              // The headers go out even when no event did; the socket is closed by the client or by close().
              await write(response, '');
              return;
            case 'stream-error':
              response.end(formatEvent(definition.streamErrorEvent(behaviour.message ?? 'Simulated stream failure', written)));
              return;
            case 'malformed':
              await write(response, 'data: {"malformed": \n\n');
              break;
            default: {
              const unknown: never = behaviour;
              throw new Error(`unknown behaviour ${JSON.stringify(unknown)}`);
            }
          }
        }
        if (written === events.length) break;
        await write(response, formatEvent(events[written]));
      }
      response.end();
    },
  };
}

/** A copy of `body` with the field at `path` set to `value`, the objects on the way created when absent. */
function retyped(body: unknown, path: readonly (string | number)[], value: unknown): unknown {
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string | number, unknown>;
  }
  node[path.at(-1)!] = value;
  return copy;
}

/** Writes and waits until the chunk left the process, so that events arrive as separate chunks. */
function write(response: ServerResponse, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (response.destroyed) return resolve();
    // A client that hangs up mid-write must not leave the simulator waiting forever.
    response.once('close', resolve);
    response.write(text, () =>
      setImmediate(() => {
        response.off('close', resolve);
        resolve();
      }),
    );
  });
}

async function readRequest(incoming: IncomingMessage): Promise<RecordedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  const rawBytes = Buffer.concat(chunks);
  const rawBody = rawBytes.toString('utf8');
  let body: unknown;
  try {
    body = rawBody === '' ? undefined : JSON.parse(rawBody);
  } catch {
    body = undefined;
  }
  return { method: incoming.method ?? 'GET', path: incoming.url ?? '/', headers: incoming.headers, rawBody, rawBytes, body };
}
