/**
 * A client that sends its request slowly is cut off: the whole request (headers and body) must
 * arrive within the request timeout, else the answer is 408 in the error envelope and the
 * connection closes. An answer streamed for longer than that timeout is not affected. The timeout
 * is made short here; the server's default is DEFAULT_REQUEST_TIMEOUT_MS.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { endpoint, model, simulatedConfig } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

/** Short, yet long enough that a request sent at once on a busy machine always makes it. */
const TIMEOUT_MS = 1_000;
/** The simulated provider's pause between streamed chunks. */
const CHUNK_DELAY_MS = 200;

const config = simulatedConfig([model('gateway/slow', [endpoint('sim-slow')])], {
  providers: [{ id: 'sim', kind: 'simulated', simulated: { chunk_delay_ms: CHUNK_DELAY_MS } }],
});

interface RawAnswer {
  readonly head: string;
  readonly body: string;
  /** How many body bytes had been sent when the answer came. */
  readonly bytesSent: number;
}

/**
 * POSTs a chat completion over a raw socket, declaring its whole Content-Length but sending the body
 * one byte every `pauseMs` (the whole body, at most, when no answer comes), or all of it at once
 * when `pauseMs` is null; resolves with the answer once the server has closed the connection.
 */
function slowPost(baseUrl: string, apiKey: string, pauseMs: number | null): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  const body = JSON.stringify({ model: 'gateway/slow', messages: [{ role: 'user', content: 'slowly' }] });
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    let bytesSent = 0;
    let answered = false;
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      received += chunk;
      answered = true;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const split = received.indexOf('\r\n\r\n');
      resolve({ head: received.slice(0, split), body: received.slice(split + 4), bytesSent });
    });
    socket.on('connect', async () => {
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${apiKey}\r\n` +
          `Content-Type: application/json\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
      );
      if (pauseMs === null) {
        socket.write(body);
        bytesSent = Buffer.byteLength(body);
        return;
      }
      for (const byte of body) {
        if (answered || socket.destroyed) return;
        socket.write(byte);
        bytesSent += 1;
        await sleep(pauseMs);
      }
    });
  });
}

describe('slow clients', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({ config, requestTimeoutMs: TIMEOUT_MS });
  });
  after(() => gateway.close());

  test('a body sent a byte at a time is answered 408 in the envelope, and the connection closes', async () => {
    // The body has over 90 bytes; at one per 50 ms it would take far longer than the timeout.
    const answer = await slowPost(gateway.baseUrl, gateway.apiKey, 50);
    assert.match(answer.head, /^HTTP\/1\.1 408 /);
    assert.match(answer.head, /\r\nx-gateway-request-id: req_[0-9a-z]+\r\n/i);
    const error = JSON.parse(answer.body).error;
    assert.deepEqual(Object.keys(error).sort(), ['code', 'message', 'param', 'type']);
    assert.equal(error.type, 'invalid_request_error');
    assert.ok(answer.bytesSent < 90, `the answer came before the body was complete (${answer.bytesSent} bytes sent)`);
  });

  test('a request sent at normal speed is answered normally', async () => {
    const answer = await slowPost(gateway.baseUrl, gateway.apiKey, null);
    assert.match(answer.head, /^HTTP\/1\.1 200 /);
  });

  test('a stream that lasts longer than the request timeout runs to its end', async () => {
    const prompt = Array.from({ length: 100 }, (_, index) => `word${index}`).join(' ');
    const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gateway/slow', stream: true, messages: [{ role: 'user', content: prompt }] }),
    });
    assert.equal(response.status, 200);
    const text = await response.text();
    const chunks = text.split('\n\n').filter((event) => event.startsWith('data: {'));
    // Each chunk waits CHUNK_DELAY_MS, so this many of them outlast the request timeout by far.
    assert.ok(chunks.length * CHUNK_DELAY_MS > 3 * TIMEOUT_MS, `${chunks.length} chunks`);
    assert.ok(text.trimEnd().endsWith('data: [DONE]'), text.slice(-200));
    assert.ok(!text.includes('"error"'), text);
  });
});
