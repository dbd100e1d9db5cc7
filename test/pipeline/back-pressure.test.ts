/**
 * A client that does not read its stream, on a real socket: the gateway reads its upstream no
 * faster than the client's socket takes the frames, so what the gateway process holds stays
 * bounded, the upstream's writes block (it cannot send the whole answer), and once the client
 * reads again the whole stream arrives intact. Measured in bytes on the three sockets — the
 * simulator's sent bytes, the gateway's upstream socket, the gateway's socket to the client — never
 * in time: the test waits until the simulator's writes are blocked (its socket holds bytes the
 * kernel would not take).
 */
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import { startOpenAIChatSimulator, type OpenAIChatSimulator } from '../simulators/openai-chat.ts';

/** The reply echoes the prompt word by word: 60,000 stream events, about 14 MB from the upstream. */
const WORDS = 60_000;
/** What the gateway process may hold between its upstream socket and the client's socket. */
const GATEWAY_HELD_BOUND = 1024 * 1024;

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
  let upstream: OpenAIChatSimulator;
  let upstreamSocket: Socket | undefined;
  let clientSideSocket: Socket | undefined;
  const onUpstreamConnected = (message: unknown) => {
    const { socket } = message as { socket: Socket };
    if (socket.remotePort === Number(new URL(upstream.origin).port)) upstreamSocket = socket;
  };

  before(async () => {
    upstream = await startOpenAIChatSimulator();
    const config = chatModelsConfig({ 'gateway/long': [{ id: 'long', kind: 'openai', baseUrl: upstream.baseUrl }] });
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
    const prompt = Array.from({ length: WORDS }, (_, index) => `w${index}`).join(' ');
    const body = JSON.stringify({ model: 'gateway/long', stream: true, max_tokens: 150_000, messages: [{ role: 'user', content: prompt }] });
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

    // The simulator writes an event at a time: on a busy machine it takes a while to fill the buffers.
    await eventually(async () => assert.ok(upstream.backlogged(), "the upstream's writes are blocked"), 90_000);
    const sent = upstream.bytesSent();
    assert.ok(upstreamSocket && clientSideSocket, 'both of the gateway’s sockets were seen');
    const upstreamRead = upstreamSocket.bytesRead;
    const handedToClient = clientSideSocket.bytesWritten;
    const held = upstreamRead - handedToClient;
    console.log(
      `# non-reading client: simulator sent ${sent} B; gateway read ${upstreamRead} B from it and handed ${handedToClient} B to the client's socket ` +
        `(${held} B held in the gateway process); the client read ${read} B; the rest is in the kernel's socket buffers`,
    );
    assert.equal(read, 0, 'the client read nothing');
    assert.ok(held <= GATEWAY_HELD_BOUND, `the gateway holds ${held} B`);
    assert.ok(upstream.abandoned.length === 0 && upstream.requests.length === 1);

    // The stream is far larger than what the sockets buffer: the upstream was held back.
    client.resume();
    await ended;
    const answer = dechunk(Buffer.concat(chunks));
    assert.ok(sent < upstream.bytesSent(), `the upstream had sent ${sent} of ${upstream.bytesSent()} B when it was held back`);
    assert.match(answer.head, /^HTTP\/1\.1 200 /);
    assert.ok(answer.body.trimEnd().endsWith('data: [DONE]'), answer.body.slice(-200));
    const words = [...answer.body.matchAll(/"content":" w(\d+)"/g)].map((match) => Number(match[1]));
    assert.equal(words.length, WORDS, 'every word arrived');
    assert.deepEqual(words.slice(0, 3), [0, 1, 2]);
    assert.equal(words.at(-1), WORDS - 1);
  });
});
