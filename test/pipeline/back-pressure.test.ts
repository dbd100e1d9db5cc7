/**
 * A client that does not read its stream, on a real socket: the gateway reads its upstream no
 * faster than the client's socket takes the frames, so what the gateway process holds stays
 * bounded, the upstream's writes block, and once the client reads again the whole stream arrives
 * intact. Measured in bytes on the three sockets — the upstream's sent bytes, the gateway's upstream
 * socket, the gateway's socket to the client — never in time. The upstream streams for as long as
 * the test lets it, so that its answer outgrows whatever the kernel's socket buffers on the way take
 * (on loopback they grow to tens of MB): the test waits until the upstream's writes and the
 * gateway's writes to the client are both blocked, and only then lets the upstream finish.
 */
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';

/** What the gateway process may hold between its upstream socket and the client's socket. */
const GATEWAY_HELD_BOUND = 1024 * 1024;

interface EndlessUpstream {
  readonly origin: string;
  /** Words streamed so far, and bytes written to the connection (what the kernel took, and what waits for it). */
  words(): number;
  bytesSent(): number;
  /** Where word `index` ends in the bytes of the connection. */
  wordEnd(index: number): number;
  /** Whether the stream waits for its connection to drain: the kernel would take no more. */
  blocked(): boolean;
  /** Ends the stream after the words written so far. */
  finish(): void;
  /** Resolves when the answer has ended. */
  ended: Promise<void>;
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible chat upstream whose streamed answer is the words ` w0`, ` w1`, … one per
 * chunk, written as fast as its connection takes them, until finish().
 */
async function startEndlessUpstream(): Promise<EndlessUpstream> {
  let words = 0;
  /** Each word's end in the connection's bytes (net.Socket counts what it buffers as written). */
  const ends: number[] = [];
  let waiting = false;
  let finishing = false;
  let connection: Socket | undefined;
  let ended!: () => void;
  const endedPromise = new Promise<void>((resolve) => (ended = resolve));
  const event = (data: unknown) => `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
  const chunk = (delta: object, finishReason: string | null = null) => ({
    id: 'chatcmpl-endless',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'long',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  const stream = async (response: ServerResponse) => {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.write(event(chunk({ role: 'assistant', content: '' })));
    while (!finishing && !response.destroyed) {
      const room = response.write(event(chunk({ content: ` w${words++}` })));
      ends.push(connection?.bytesWritten ?? 0);
      if (room) continue;
      waiting = true;
      await once(response, 'drain');
      waiting = false;
    }
    const usage = { prompt_tokens: 10, completion_tokens: words, total_tokens: 10 + words };
    response.end(event(chunk({}, 'stop')) + event({ ...chunk({}), choices: [], usage }) + event('[DONE]'));
    await once(response, 'finish');
    ended();
  };
  const server: Server = createServer((request, response) => {
    connection = request.socket;
    request.resume();
    request.on('end', () => void stream(response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    words: () => words,
    bytesSent: () => connection?.bytesWritten ?? 0,
    wordEnd: (index) => ends[index] ?? 0,
    blocked: () => waiting,
    finish: () => {
      finishing = true;
    },
    ended: endedPromise,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The numbers of the words in streamed chat chunks. */
function wordsIn(text: string): number[] {
  return [...text.matchAll(/"content":" w(\d+)"/g)].map((match) => Number(match[1]));
}

/** The body of a raw HTTP/1.1 answer sent in chunked transfer encoding, and its head. */
function dechunk(raw: Buffer): { readonly head: string; readonly body: string } {
  const split = raw.indexOf('\r\n\r\n');
  const parts: Buffer[] = [];
  let at = split + 4;
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', at);
    const size = Number.parseInt(raw.subarray(at, lineEnd).toString('latin1'), 16);
    if (size === 0) break;
    parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return { head: raw.subarray(0, split).toString('latin1'), body: Buffer.concat(parts).toString('utf8') };
}

describe('back-pressure from a client that does not read', () => {
  let gateway: TestGateway;
  let upstream: EndlessUpstream;
  let upstreamSocket: Socket | undefined;
  let clientSideSocket: Socket | undefined;
  const onUpstreamConnected = (message: unknown) => {
    const { socket } = message as { socket: Socket };
    if (socket.remotePort === Number(new URL(upstream.origin).port)) upstreamSocket = socket;
  };

  before(async () => {
    upstream = await startEndlessUpstream();
    const config = chatModelsConfig({ 'gateway/long': [{ id: 'long', kind: 'openai', baseUrl: `${upstream.origin}/v1` }] });
    for (const entry of config.models) entry.endpoints[0].limits = { ...entry.endpoints[0].limits, max_tokens: 200_000, context_window: 1_000_000 };
    gateway = await startGateway({ config });
    gateway.app.server.on('connection', (socket: Socket) => {
      clientSideSocket = socket;
    });
    diagnostics.subscribe('undici:client:connected', onUpstreamConnected);
  });
  after(async () => {
    diagnostics.unsubscribe('undici:client:connected', onUpstreamConnected);
    await gateway?.close();
    await upstream?.close();
  });

  test('the gateway holds at most 1 MiB, the upstream blocks, and the whole stream arrives once read', async () => {
    const body = JSON.stringify({ model: 'gateway/long', stream: true, max_tokens: 150_000, messages: [{ role: 'user', content: 'Count.' }] });
    const { hostname, port } = new URL(gateway.baseUrl);
    const client = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let read = 0;
    const ended = new Promise<void>((resolve) => client.on('end', resolve));
    client.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      read += chunk.length;
    });
    client.pause();
    client.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${gateway.apiKey}\r\n` +
        `Content-Type: application/json\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );

    // Both writers blocked at once is a state that lasts while the client does not read: the
    // gateway's socket to the client is full, so the gateway stops reading, and the upstream's fills.
    await eventually(async () => {
      assert.ok(upstream.blocked(), "the upstream's writes are blocked");
      assert.ok(clientSideSocket !== undefined && clientSideSocket.writableLength > 0, "the gateway's writes to the client are blocked");
    }, 90_000);
    const sent = upstream.bytesSent();
    assert.ok(upstreamSocket && clientSideSocket, 'both of the gateway’s sockets were seen');
    const upstreamRead = upstreamSocket.bytesRead;
    const handedToClient = clientSideSocket.bytesWritten;
    assert.equal(read, 0, 'the client read nothing');

    // Reading again lets every word through, in order, and the stream ends.
    upstream.finish();
    client.resume();
    await Promise.all([ended, upstream.ended]);
    const raw = Buffer.concat(chunks);
    // What the gateway held: the upstream's bytes it had read past the last word it had handed to
    // the client's socket (the two sides encode a word differently, so bytes are compared on one side).
    const wordsHanded = wordsIn(raw.subarray(0, handedToClient).toString('latin1')).length;
    const held = upstreamRead - upstream.wordEnd(wordsHanded - 1);
    console.log(
      `# non-reading client: the upstream sent ${sent} B; the gateway read ${upstreamRead} B from it and handed ${handedToClient} B (${wordsHanded} words) ` +
        `to the client's socket, ${held} B of the upstream's held in the gateway process; the rest is in the kernel's socket buffers`,
    );
    assert.ok(wordsHanded > 0 && held <= GATEWAY_HELD_BOUND, `the gateway holds ${held} B`);
    const answer = dechunk(raw);
    assert.ok(sent < upstream.bytesSent(), `the upstream had sent ${sent} of ${upstream.bytesSent()} B when it was held back`);
    assert.match(answer.head, /^HTTP\/1\.1 200 /);
    assert.ok(answer.body.trimEnd().endsWith('data: [DONE]'), answer.body.slice(-200));
    const words = wordsIn(answer.body);
    assert.equal(words.length, upstream.words(), 'every word arrived');
    assert.ok(
      words.every((word, index) => word === index),
      'in order',
    );
  });
});
