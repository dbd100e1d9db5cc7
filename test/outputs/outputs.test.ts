/**
 * GET /v1/outputs/{requestId} and its signed file URLs end to end, on both stores (files in the
 * data dir on SQLite, in PostgreSQL on PostgreSQL), with the gateway's clock in the test's hands:
 * every stored endpoint's request lists its JSON output, stored files stream back with their
 * content type; only the owner sees a stored request; URLs are refused once expired, tampered with
 * or pointed elsewhere; a record past its 24 hours, another endpoint's row and a video job's id are
 * 404s; the sweep deletes expired rows and files in batches and keeps the rest.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEMO_CONFIG_PATH, loadConfigFile } from '../../src/config/load.ts';
import { usdToPicos } from '../../src/core/money.ts';
import { outputKey } from '../../src/outputs/outputs.ts';
import { createLogger, createRuntime } from '../../src/server/compose.ts';
import { REQUEST_LOG_LIFETIME_MS, requestLogRecord } from '../../src/pipeline/request-log.ts';
import { BLOB_SWEEP_BATCH, runMaintenance } from '../../src/storage/maintenance.ts';
import type { OwnerRef } from '../../src/storage/store.ts';
import { eventually } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call, type JsonResponse } from '../helpers/http.ts';

const MODEL = 'gateway/atlas-4-5';

/** Waits until an instance finds a stored request that another instance answered (its row is written in a batch). */
async function eventuallyStored(baseUrl: string, key: string, id: string): Promise<void> {
  await eventually(async () => assert.equal((await call(baseUrl, 'GET', `/v1/outputs/${id}`, { key })).status, 200, `${id} is found by the other instance`));
}

/** A GET whose path goes out exactly as written (no dot-segment resolution), read as JSON. */
function rawGet(url: string): Promise<JsonResponse> {
  const { hostname, port } = new URL(url);
  const path = url.slice(url.indexOf('/', url.indexOf('//') + 2));
  return new Promise((resolve, reject) => {
    const request = httpGet({ hostname, port, path }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const headers = new Headers();
        for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') headers.set(name, value);
        resolve({ status: response.statusCode ?? 0, headers, body: JSON.parse(text), text });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}
const silent = { debug() {}, info() {}, warn() {}, error() {} };

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`stored outputs (${engine})`, () => {
    let gateway: TestGateway;
    let stranger: string;
    const clock = { now: Date.now() };
    before(async () => {
      gateway = await startGateway({ engine, now: () => clock.now });
      const account = await gateway.store.createAccount({ name: 'stranger' });
      const owner: OwnerRef = { kind: 'account', id: account.id };
      await gateway.store.addCredit(owner, usdToPicos('10'), 'test credit');
      stranger = await gateway.createKey({ owner });
    });
    after(() => gateway.close());

    const chat = async () => {
      const response = await call(gateway.baseUrl, 'POST', '/v1/chat/completions', {
        key: gateway.apiKey,
        json: { model: MODEL, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 16 },
      });
      assert.equal(response.status, 200, response.text);
      return { response, id: response.headers.get('x-gateway-request-id')! };
    };
    const stored = (id: string, key = gateway.apiKey) => call(gateway.baseUrl, 'GET', `/v1/outputs/${id}`, { key });
    const urlOf = async (id: string, name: string) => {
      const got = await stored(id);
      assert.equal(got.status, 200, got.text);
      const entry = got.body.outputs.find((output: { name: string }) => output.name === name);
      assert.ok(entry, `${name} in ${got.text}`);
      return entry as { url: string; expires_at: number; content_type: string; size: number };
    };
    /** Fetches a URL (absolute, or a path on the gateway) with no API key. */
    const download = (url: string) => fetch(url.startsWith('http') ? url : `${gateway.baseUrl}${url}`);
    const assertRefused = async (url: string, code: 'invalid_signature' | 'url_expired') => {
      // Sent as written: fetch would resolve `..` and `%2e%2e` segments before they reach the gateway.
      const response = await rawGet(url.startsWith('http') ? url : `${gateway.baseUrl}${url}`);
      assertError(response, { status: 403, type: 'permission_error', code, param: null });
    };
    const assertNotFound = async (id: string, key?: string) =>
      assertError(await stored(id, key), { status: 404, type: 'invalid_request_error', code: 'not_found', param: null });

    test('a chat request is stored: its record, and its JSON output served by a signed URL with no API key', async () => {
      const { response, id } = await chat();
      const got = await stored(id);
      assert.equal(got.status, 200, got.text);
      const { outputs, usage, ...record } = got.body;
      assert.deepEqual(record, {
        object: 'stored_request',
        id,
        endpoint: '/v1/chat/completions',
        model: MODEL,
        status: 'completed',
        http_status: 200,
        created: Math.floor(clock.now / 1000),
        expires_at: Math.floor((clock.now + REQUEST_LOG_LIFETIME_MS) / 1000),
        cost_usd: response.headers.get('x-gateway-cost-usd'),
      });
      assert.equal(usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens, response.body.usage.prompt_tokens);
      assert.equal(usage.output_tokens, response.body.usage.completion_tokens);
      assert.equal(outputs.length, 1);
      const [output] = outputs;
      assert.deepEqual([output.name, output.content_type, output.expires_at], ['output.json', 'application/json', Math.floor(clock.now / 1000) + 600]);
      assert.ok(output.url.startsWith(`${gateway.baseUrl}/v1/outputs/${id}/files/output.json?expires=`), output.url);
      const file = await download(output.url);
      assert.equal(file.status, 200);
      assert.match(file.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(file.headers.get('x-content-type-options'), 'nosniff');
      const text = await file.text();
      assert.equal(Buffer.byteLength(text), output.size);
      assert.deepEqual(JSON.parse(text), response.body);
    });

    test('messages and responses requests are stored too, under their endpoints', async () => {
      const messages = await call(gateway.baseUrl, 'POST', '/v1/messages', {
        key: gateway.apiKey,
        json: { model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] },
      });
      const responses = await call(gateway.baseUrl, 'POST', '/v1/responses', {
        key: gateway.apiKey,
        json: { model: MODEL, input: 'Hello', max_output_tokens: 16 },
      });
      for (const [answer, endpoint] of [
        [messages, '/v1/messages'],
        [responses, '/v1/responses'],
      ] as const) {
        assert.equal(answer.status, 200, answer.text);
        const id = answer.headers.get('x-gateway-request-id')!;
        const got = await stored(id);
        assert.equal(got.body.endpoint, endpoint);
        const file = await download((await urlOf(id, 'output.json')).url);
        assert.deepEqual(await file.json(), answer.body);
      }
    });

    test('stored files (an image route’s) are listed and streamed back with their content type', async () => {
      const { id } = await chat();
      const large = randomBytes(1024 * 1024 + 5);
      async function* slowly() {
        for (let offset = 0; offset < large.length; offset += 100_000) yield large.subarray(offset, offset + 100_000);
      }
      const written = await gateway.deps.outputs.storeOutputFiles(id, [
        { name: 'image-0.png', contentType: 'image/png', bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47]) },
        { name: 'image-1.webp', contentType: 'image/webp', bytes: slowly() },
      ]);
      assert.deepEqual(
        written.map((blob) => [blob.key, blob.size]),
        [
          [outputKey(id, 'image-0.png'), 4],
          [outputKey(id, 'image-1.webp'), large.length],
        ],
      );
      const got = await stored(id);
      assert.deepEqual(
        got.body.outputs.map((output: Record<string, unknown>) => [output.name, output.content_type, output.size]),
        [
          ['output.json', 'application/json', got.body.outputs[0].size],
          ['image-0.png', 'image/png', 4],
          ['image-1.webp', 'image/webp', large.length],
        ],
      );
      const small = await download(got.body.outputs[1].url);
      assert.equal(small.headers.get('content-type'), 'image/png');
      assert.deepEqual(Buffer.from(await small.arrayBuffer()), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      const big = await download(got.body.outputs[2].url);
      assert.equal(big.headers.get('content-type'), 'image/webp');
      assert.equal(big.headers.get('content-length'), String(large.length));
      assert.ok(Buffer.from(await big.arrayBuffer()).equals(large));
    });

    test('only the owner sees a stored request: another owner, an unknown id, no key or no scope are refused', async () => {
      const { id } = await chat();
      await assertNotFound(id, stranger);
      // Another key of the same owner sees it.
      assert.equal((await stored(id, await gateway.createKey())).status, 200);
      await assertNotFound('req_00000000000000000000000000');
      await assertNotFound('not-a-request');
      assertError(await call(gateway.baseUrl, 'GET', `/v1/outputs/${id}`), { status: 401, type: 'authentication_error', code: 'missing_api_key' });
      const chatOnly = await gateway.createKey({ scopes: ['chat'] });
      assertError(await stored(id, chatOnly), { status: 403, type: 'permission_error', code: 'insufficient_scope' });
      assert.equal((await stored(id, await gateway.createKey({ scopes: ['outputs'] }))).status, 200);
    });

    test('a signed URL works until its expiry, by the gateway’s clock, then is refused however often it is replayed', async () => {
      const { id } = await chat();
      const start = clock.now;
      const { url, expires_at } = await urlOf(id, 'output.json');
      try {
        clock.now = start + 10 * 60_000 - 1_000;
        assert.equal((await download(url)).status, 200);
        assert.equal((await download(url)).status, 200);
        clock.now = expires_at * 1000;
        await assertRefused(url, 'url_expired');
        clock.now = start + 60 * 60_000;
        await assertRefused(url, 'url_expired');
        // Retrieving the stored request again signs afresh.
        const fresh = await urlOf(id, 'output.json');
        assert.equal(fresh.expires_at, Math.floor(clock.now / 1000) + 600);
        assert.equal((await download(fresh.url)).status, 200);
      } finally {
        clock.now = start;
      }
    });

    test('a tampered, re-pointed or traversing URL is refused with the envelope', async () => {
      const { id } = await chat();
      const other = (await chat()).id;
      await gateway.deps.outputs.storeOutputFiles(id, [{ name: 'image-0.png', contentType: 'image/png', bytes: new Uint8Array([1]) }]);
      const { url } = await urlOf(id, 'output.json');
      const parsed = new URL(url);
      const signature = parsed.searchParams.get('signature')!;
      const expires = parsed.searchParams.get('expires')!;
      const path = (requestId: string, name: string, query: string) => `/v1/outputs/${requestId}/files/${name}?${query}`;
      const flipped = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
      await assertRefused(path(id, 'output.json', `expires=${expires}&signature=${flipped}`), 'invalid_signature');
      await assertRefused(path(id, 'output.json', `expires=${Number(expires) + 3600}&signature=${signature}`), 'invalid_signature');
      await assertRefused(path(id, 'image-0.png', `expires=${expires}&signature=${signature}`), 'invalid_signature');
      await assertRefused(path(other, 'output.json', `expires=${expires}&signature=${signature}`), 'invalid_signature');
      await assertRefused(path(id, 'output.json', `expires=${expires}`), 'invalid_signature');
      await assertRefused(path(id, 'output.json', ''), 'invalid_signature');
      for (const name of ['..%2F..%2Foutput-secret', '%2e%2e', '..', `..%2F${id}%2Foutput.json`, '.output.json', 'a%5Cb', '%2Fetc%2Fpasswd']) {
        await assertRefused(path(id, name, `expires=${expires}&signature=${signature}`), 'invalid_signature');
      }
      await assertRefused(path('..', 'output-secret', `expires=${expires}&signature=${signature}`), 'invalid_signature');
      await assertRefused(path('%2e%2e%2F%2e%2e', 'output-secret', `expires=${expires}&signature=${signature}`), 'invalid_signature');
      // The untouched URL still works.
      assert.equal((await download(url)).status, 200);
    });

    test('a record past its 24 hours, another endpoint’s row and a video job’s id are 404s', async () => {
      const { id } = await chat();
      const start = clock.now;
      try {
        clock.now = start + REQUEST_LOG_LIFETIME_MS;
        await assertNotFound(id);
        // Even a URL signed now, with the secret, finds nothing to serve.
        const late = gateway.deps.outputs.signedOutputUrl(gateway.baseUrl, id, 'output.json', clock.now);
        const response = await download(late.url);
        assert.equal(response.status, 404);
      } finally {
        clock.now = start;
      }
      assert.equal((await stored(id)).status, 200);

      const owner: OwnerRef = { kind: 'account', id: gateway.account.id };
      const videoRow = `req_video${randomBytes(4).toString('hex')}`;
      await gateway.store.recordRequests([
        requestLogRecord({
          requestId: videoRow,
          owner,
          keyId: 'key_x',
          route: 'videos',
          stream: false,
          createdAt: clock.now,
          durationMs: 1,
          status: 'completed',
          httpStatus: 200,
          output: { id: videoRow },
        }),
      ]);
      await assertNotFound(videoRow);
      // A video job whose id is that of a stored request is still not retrieved here.
      const { id: shared } = await chat();
      await gateway.store.createJob({
        id: shared,
        kind: 'video',
        owner,
        keyId: 'key_x',
        status: 'queued',
        payload: null,
        result: null,
        reservationId: null,
        createdAt: clock.now,
        expiresAt: clock.now + REQUEST_LOG_LIFETIME_MS,
      });
      await assertNotFound(shared);
    });

    test('the sweep deletes expired records and their files in batches and keeps the rest', async () => {
      const start = clock.now;
      const old = await chat();
      const blobs = gateway.deps.outputs.blobs;
      const files = Array.from({ length: BLOB_SWEEP_BATCH + 20 }, (_, index) => ({
        name: `image-${index}.png`,
        contentType: 'image/png',
        bytes: new Uint8Array([index & 0xff]),
      }));
      await gateway.deps.outputs.storeOutputFiles(old.id, files);
      let young: string;
      try {
        clock.now = start + 60 * 60_000;
        young = (await chat()).id;
        await gateway.deps.outputs.storeOutputFiles(young, [{ name: 'image-0.png', contentType: 'image/png', bytes: new Uint8Array([9]) }]);
        assert.equal((await stored(young)).status, 200);
        // Not yet: one millisecond before the old request's lifetime ends, nothing of it goes.
        await runMaintenance(gateway.store, start + REQUEST_LOG_LIFETIME_MS - 1, silent, { store: blobs, lifetimeMs: REQUEST_LOG_LIFETIME_MS });
        assert.equal((await gateway.deps.outputs.listOutputFiles(old.id)).length, files.length);
        assert.notEqual(await gateway.store.getRequest(old.id), null);

        clock.now = start + REQUEST_LOG_LIFETIME_MS + 1;
        await runMaintenance(gateway.store, clock.now, silent, { store: blobs, lifetimeMs: REQUEST_LOG_LIFETIME_MS });
        assert.deepEqual(await gateway.deps.outputs.listOutputFiles(old.id), []);
        assert.equal(await gateway.store.getRequest(old.id), null);
        await assertNotFound(old.id);
        // The younger request keeps its record and its file.
        const kept = await stored(young);
        assert.equal(kept.status, 200);
        assert.deepEqual(
          kept.body.outputs.map((output: { name: string }) => output.name),
          ['output.json', 'image-0.png'],
        );
      } finally {
        clock.now = start;
      }
    });
  });
}

describe('stored outputs across instances and behind a proxy', () => {
  test('on PostgreSQL, an instance with no shared folder but the same secret lists and serves what another stored', async () => {
    const outputSecret = randomBytes(32).toString('base64url');
    const first = await startGateway({ engine: 'postgres', outputSecret });
    const otherDir = await mkdtemp(join(tmpdir(), 'gateway-second-'));
    const runtime = await createRuntime({
      config: loadConfigFile(DEMO_CONFIG_PATH),
      storage: { ...first.storage, dataDir: otherDir },
      env: {},
      logger: createLogger('silent'),
      outputSecret,
    });
    try {
      const secondUrl = await runtime.listen('127.0.0.1', 0);
      const chat = await call(first.baseUrl, 'POST', '/v1/chat/completions', {
        key: first.apiKey,
        json: { model: MODEL, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8 },
      });
      const id = chat.headers.get('x-gateway-request-id')!;
      const image = randomBytes(300_000);
      await first.deps.outputs.storeOutputFiles(id, [{ name: 'image-0.png', contentType: 'image/png', bytes: image }]);
      // The row is written in a batch on the first instance: flushed before the second looks.
      await eventuallyStored(secondUrl, first.apiKey, id);
      const got = await call(secondUrl, 'GET', `/v1/outputs/${id}`, { key: first.apiKey });
      assert.deepEqual(
        got.body.outputs.map((output: { name: string }) => output.name),
        ['output.json', 'image-0.png'],
      );
      // Signed by the second instance, served by the first.
      for (const output of got.body.outputs) {
        const url = new URL(output.url);
        assert.equal(url.origin, secondUrl);
        const served = await fetch(`${first.baseUrl}${url.pathname}${url.search}`);
        assert.equal(served.status, 200);
        if (output.name === 'image-0.png') assert.ok(Buffer.from(await served.arrayBuffer()).equals(image));
        else assert.deepEqual(await served.json(), chat.body);
      }
      // Nothing in the second instance's data dir: no blob folder, no secret file.
      assert.deepEqual(await readdir(otherDir), []);
    } finally {
      await runtime.close();
      await rm(otherDir, { recursive: true, force: true });
      await first.close();
    }
  });

  test('GATEWAY_PUBLIC_URL is the origin of signed URLs, and the operator’s secret signs them', async () => {
    const outputSecret = randomBytes(32).toString('base64url');
    const gateway = await startGateway({ publicUrl: 'https://gateway.example.com/ai', outputSecret });
    try {
      const chat = await call(gateway.baseUrl, 'POST', '/v1/chat/completions', {
        key: gateway.apiKey,
        json: { model: MODEL, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8 },
      });
      const id = chat.headers.get('x-gateway-request-id')!;
      const got = await call(gateway.baseUrl, 'GET', `/v1/outputs/${id}`, { key: gateway.apiKey });
      const url = new URL(got.body.outputs[0].url);
      assert.equal(url.origin + url.pathname, `https://gateway.example.com/ai/v1/outputs/${id}/files/output.json`);
      // The proxy strips its prefix: the gateway serves the same path and query.
      const served = await fetch(`${gateway.baseUrl}/v1/outputs/${id}/files/output.json${url.search}`);
      assert.equal(served.status, 200);
      assert.deepEqual(await served.json(), chat.body);
    } finally {
      await gateway.close();
    }
  });

  test('/openapi.json describes both routes', async () => {
    const gateway = await startGateway();
    try {
      const spec = (await call(gateway.baseUrl, 'GET', '/openapi.json')).body;
      assert.ok(spec.paths['/v1/outputs/{requestId}']?.get, Object.keys(spec.paths).join(' '));
      assert.ok(spec.paths['/v1/outputs/{requestId}/files/{name}']?.get);
      assert.deepEqual(spec.paths['/v1/outputs/{requestId}/files/{name}'].get.security, [], 'the file route needs no key');
      assert.equal(spec.paths['/v1/outputs/{requestId}'].get.security, undefined, 'the stored request takes the API key schemes');
      assert.ok(spec.paths['/v1/outputs/{requestId}'].get.responses['200']);
    } finally {
      await gateway.close();
    }
  });
});
