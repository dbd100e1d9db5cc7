/**
 * Connections and bodies (docs/security.md): over real sockets on loopback, bounded in number.
 * - A client that sent part of a request and stopped is answered 408 and its socket destroyed, even
 *   when the client never closes its side (an ended socket used to stay open, with its descriptor).
 * - Open connections are capped in all and per address; past a cap the connection is answered 503
 *   `server_busy` with `Retry-After` and closed, and a freed slot is taken again.
 * - Request bodies in flight share one budget: a body that does not fit is refused with a 503
 *   before it is read, so any number of slow clients hold at most the budget.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { metricValue } from '../helpers/metrics.ts';

/** Fails a wait that would otherwise hang the run; the assertions are on counts, never on time. */
const GUARD_MS = 15_000;

async function within<T>(what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen`)), GUARD_MS);
  });
  try {
    return await Promise.race([promise, guard]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `probe` until it holds (each poll waits for the server's own events to have run). */
async function eventually(what: string, probe: () => Promise<boolean>): Promise<void> {
  await within(
    what,
    (async () => {
      while (!(await probe())) await sleep(20);
    })(),
  );
}

interface RawClient {
  readonly socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves when the server has answered (a whole head and body) or ended the connection. */
  readonly answered: Promise<string>;
}

/**
 * A raw connection from `localAddress`. It never closes its side by itself (`allowHalfOpen`), as a
 * hostile client would not: only the server's destroying its socket ends the connection.
 */
function rawClient(baseUrl: string, localAddress = '127.0.0.1'): Promise<RawClient> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(port), host: '127.0.0.1', localAddress, allowHalfOpen: true });
    let text = '';
    let answer: (value: string) => void;
    const answered = new Promise<string>((done) => {
      answer = done;
    });
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const split = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(text)?.[1];
      if (split >= 0 && length !== undefined && text.length >= split + 4 + Number(length)) answer(text);
    });
    socket.on('end', () => answer(text));
    socket.on('close', () => answer(text));
    socket.on('error', () => {});
    socket.once('connect', () => resolve({ socket, received: () => text, answered }));
    socket.once('error', reject);
  });
}

function assertBusy(answer: string): void {
  assert.match(answer, /^HTTP\/1\.1 503 /);
  assert.match(answer, /\r\nretry-after: 1\r\n/i);
  assert.match(answer, /\r\nconnection: close\r\n/i);
  assert.match(answer, /\r\nx-gateway-request-id: req_[0-9a-z]+\r\n/i);
  const error = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error;
  assert.deepEqual(Object.keys(error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(error.type, 'api_error');
  assert.equal(error.code, 'server_busy');
}

/** The server's side of each connection, by the client's port: resolves when the server has closed it. */
function serverSideClosings(gateway: TestGateway): Map<number, Promise<void>> {
  const closings = new Map<number, Promise<void>>();
  gateway.app.server.on('connection', (socket: Socket) => {
    closings.set(socket.remotePort!, new Promise((done) => socket.once('close', () => done())));
  });
  return closings;
}

const openConnections = async (gateway: TestGateway) => metricValue(await gateway.deps.metrics.metrics(), 'gateway_open_connections');
const bodyBytesInFlight = async (gateway: TestGateway) => metricValue(await gateway.deps.metrics.metrics(), 'gateway_request_body_bytes_in_flight');

describe('a client that stops mid-request', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({ requestTimeoutMs: 300 });
  });
  after(() => gateway.close());

  test('is answered 408 and its socket destroyed, though the client never closes its side', async () => {
    const closings = serverSideClosings(gateway);
    const clients = await Promise.all(Array.from({ length: 20 }, () => rawClient(gateway.baseUrl)));
    try {
      for (const client of clients) client.socket.write('GET /v1/mod');
      for (const answer of await within('the 408 answers', Promise.all(clients.map((client) => client.answered)))) {
        assert.match(answer, /^HTTP\/1\.1 408 /);
      }
      // The server's side of every connection is gone while the clients still hold theirs open.
      assert.equal(closings.size, 20);
      await within('the server closing its sockets', Promise.all(closings.values()));
      assert.equal(await openConnections(gateway), 0);
    } finally {
      for (const client of clients) client.socket.destroy();
    }
  });
});

describe('the connection caps', () => {
  let gateway: TestGateway;
  let closings: Map<number, Promise<void>>;
  before(async () => {
    gateway = await startGateway({ serverLimits: { maxConnections: 6, maxConnectionsPerAddress: 4 } });
    closings = serverSideClosings(gateway);
  });
  after(() => gateway.close());

  /** A connection the server has admitted: it answered a request on it, and the socket stays open. */
  async function admitted(localAddress: string): Promise<RawClient> {
    const client = await rawClient(gateway.baseUrl, localAddress);
    client.socket.write('GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n');
    assert.match(await within('an answer', client.answered), /^HTTP\/1\.1 200 /);
    return client;
  }

  test('past the per-address cap, then past the global cap, a connection gets 503 server_busy and is closed; a freed slot is taken again', async () => {
    const open: RawClient[] = [];
    try {
      for (let index = 0; index < 4; index++) open.push(await admitted('127.0.0.1'));
      const overAddress = await rawClient(gateway.baseUrl, '127.0.0.1');
      overAddress.socket.write('GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n');
      assertBusy(await within('the refusal', overAddress.answered));
      assert.match(JSON.parse(overAddress.received().split('\r\n\r\n')[1]).error.message, /from this address/);
      await within('the server closing the refused connection', closings.get(overAddress.socket.localPort!)!);

      // Other addresses still get in, up to the global cap.
      for (const address of ['127.0.0.2', '127.0.0.2']) open.push(await admitted(address));
      const overAll = await rawClient(gateway.baseUrl, '127.0.0.3');
      assertBusy(await within('the refusal', overAll.answered));
      await within('the server closing the refused connection', closings.get(overAll.socket.localPort!)!);
      assert.equal(await openConnections(gateway), 6);

      // A slot that frees is taken by the next client.
      open.shift()!.socket.destroy();
      await eventually('the freed slot', async () => (await openConnections(gateway)) === 5);
      open.push(await admitted('127.0.0.3'));
    } finally {
      for (const client of open) client.socket.destroy();
    }
  });
});

describe('the body budget', () => {
  const BUDGET = 8 * 1024 * 1024;
  const DECLARED = 1024 * 1024;
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({ serverLimits: { bodyBudgetBytes: BUDGET } });
  });
  after(() => gateway.close());

  /** Starts a chat completion declaring `declared` bytes of body and sends only its first bytes. */
  async function slowBody(declared: number): Promise<RawClient> {
    const client = await rawClient(gateway.baseUrl);
    client.socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${gateway.apiKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n{"model":`,
    );
    return client;
  }

  test('slow bodies hold at most the budget: the ones that do not fit are refused 503 before they are read', async () => {
    const clients: RawClient[] = [];
    try {
      for (let index = 0; index < 40; index++) clients.push(await slowBody(DECLARED));
      // Eight fit; each of the other 32 is answered at once, without having sent its body.
      await eventually('32 refusals', async () => clients.filter((client) => client.received() !== '').length === 32);
      for (const client of clients.filter((candidate) => candidate.received() !== '')) assertBusy(await client.answered);
      assert.equal(await bodyBytesInFlight(gateway), BUDGET);

      // A small body does not fit either while the budget is full; once the slow clients leave, it does.
      const refused = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gateway/atlas-4-5', messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'server_busy');
      for (const client of clients) client.socket.destroy();
      await eventually('the budget freed', async () => (await bodyBytesInFlight(gateway)) === 0);
      const served = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gateway/atlas-4-5', messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(served.status, 200, await served.text());
      // A parsed body no longer counts: nothing is held once the answers are out.
      assert.equal(await bodyBytesInFlight(gateway), 0);
    } finally {
      for (const client of clients) client.socket.destroy();
    }
  });
});
