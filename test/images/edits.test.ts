/**
 * POST /v1/images/edits on the simulated provider: JSON (base64) and multipart (binary) bodies,
 * the image and mask rules, PNG/JPEG/WebP validation, and each size limit at its boundary (just
 * over fails with 413, just under passes, and an oversized declared body is refused before it is
 * read).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { encode } from 'fast-png';
import { Agent } from 'undici';
import { usdToPicos } from '../../src/core/money.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, type JsonResponse } from '../helpers/http.ts';
import { ledger, newCharges, simulatedConfig } from '../chat/helpers.ts';
import { assertPng, editJson, imageEndpoint, imageModel } from './helpers.ts';

const MiB = 1024 * 1024;

const config = simulatedConfig([
  imageModel('gateway/editor', [imageEndpoint('sim-editor', { limits: { max_images: 4 } })]),
  imageModel('gateway/no-mask', [imageEndpoint('sim-no-mask', { capabilities: { image_generation: true, image_editing: true, image_mask: false } })]),
  imageModel('gateway/no-edit', [imageEndpoint('sim-no-edit', { capabilities: { image_generation: true, image_editing: false } })]),
]);

/** A PNG of random pixels (it does not compress): about width × height × 3 bytes. */
function noisePng(width: number, height: number): Buffer {
  return Buffer.from(encode({ width, height, data: randomBytes(width * height * 3), channels: 3, depth: 8 }));
}

const smallPng = (width = 8, height = 8) => Buffer.from(encode({ width, height, data: new Uint8Array(width * height * 3).fill(200), channels: 3, depth: 8 }));

/** A JPEG header as image-size reads it: SOI, a JFIF APP0, a baseline SOF0 of 16x16, then EOI. */
const TINY_JPEG = Buffer.from([
  0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00,
  0x10, 0x00, 0x10, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01, 0xff, 0xd9,
]);

async function editMultipart(
  gateway: TestGateway,
  fields: Record<string, string>,
  files: Record<string, Buffer>,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const [name, bytes] of Object.entries(files)) form.append(name, new Blob([new Uint8Array(bytes)], { type: 'image/png' }), `${name}.png`);
  const encoded = new Response(form);
  const body = Buffer.from(await encoded.arrayBuffer());
  const response = await fetch(`${gateway.baseUrl}/v1/images/edits`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': encoded.headers.get('content-type')!, ...headers },
    body,
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** A multipart body's size for these parts (FormData's own encoding, as sent). */
async function multipartSize(fields: Record<string, string>, files: Record<string, Buffer>): Promise<number> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const [name, bytes] of Object.entries(files)) form.append(name, new Blob([new Uint8Array(bytes)], { type: 'image/png' }), `${name}.png`);
  return (await new Response(form).arrayBuffer()).byteLength;
}

/** Declares a body of `declared` bytes, sends only `sent` of them, and reads the answer. */
function declaredOnly(gateway: TestGateway, contentType: string, declared: number, sent: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(`${gateway.baseUrl}/v1/images/edits`);
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': contentType, 'content-length': declared },
      },
      (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body }));
      },
    );
    outgoing.on('error', reject);
    outgoing.write(Buffer.alloc(sent, 0x2d));
  });
}

describe('image edits', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({ config, creditUsd: '5' });
  });
  after(() => gateway.close());

  const fields = { model: 'gateway/editor', prompt: 'add a hat', response_format: 'b64_json' };

  test('JSON: a base64 PNG with a mask; the result keeps the source size; charged per image', async () => {
    const before = await ledger(gateway);
    const image = smallPng(24, 16);
    const response = await editJson(gateway, { ...fields, image: image.toString('base64'), mask: smallPng(24, 16).toString('base64'), n: 2 });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.data.length, 2);
    for (const datum of response.body.data) assertPng(Buffer.from(datum.b64_json, 'base64'), { width: 24, height: 16 });
    assert.equal(response.headers.get('x-gateway-cost-usd'), '0.08');
    assert.deepEqual(
      (await newCharges(gateway, before)).map((entry) => entry.amount),
      [usdToPicos('0.08')],
    );
  });

  test('multipart: a binary PNG and mask, with an explicit size', async () => {
    const response = await editMultipart(gateway, { ...fields, size: '32x32', n: '1' }, { image: smallPng(), mask: smallPng() });
    assert.equal(response.status, 200, response.text);
    assertPng(Buffer.from(response.body.data[0].b64_json, 'base64'), { width: 32, height: 32 });
  });

  test('JPEG accepted; files that are not PNG, JPEG or WebP are 400', async () => {
    assert.equal((await editJson(gateway, { ...fields, image: TINY_JPEG.toString('base64') })).status, 200);
    const invalid = async (image: string, param = 'image') =>
      assertError(await editJson(gateway, { ...fields, image }), { status: 400, type: 'invalid_request_error', code: 'invalid_value', param });
    await invalid(Buffer.from('GIF89a not really').toString('base64'));
    await invalid('not base64!');
    // A PNG signature with a broken body.
    await invalid(Buffer.concat([smallPng().subarray(0, 40), Buffer.alloc(20)]).toString('base64'));
    assertError(await editMultipart(gateway, fields, { image: Buffer.from('plain text') }), {
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_value',
      param: 'image',
    });
    assertError(await editJson(gateway, { ...fields, image: smallPng().toString('base64'), mask: 'AAAA' }), {
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_value',
      param: 'mask',
    });
  });

  test('a multipart body refused part-way is read to its end: the requests after it on its kept-alive connection are answered', async () => {
    // One connection, kept alive, as an SDK's pool reuses it.
    const connection = new Agent({ connections: 1 });
    const post = (contentType: string, body: string) =>
      fetch(`${gateway.baseUrl}/v1/images/edits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': contentType },
        body,
        // Far below the request timeout (a minute) that the third request used to wait for.
        signal: AbortSignal.timeout(30_000),
        dispatcher: connection,
      } as RequestInit);
    try {
      // Without a boundary the parser refuses the body before reading it.
      const statuses: number[] = [];
      for (const [contentType, body] of [
        ['multipart/form-data', JSON.stringify({ image: 'A'.repeat(174_000) })],
        ['application/json', JSON.stringify({ deep: [[[]]] })],
        ['application/json', JSON.stringify({ ...fields })],
      ] as const) {
        const response = await post(contentType, body);
        statuses.push(response.status);
        await response.text();
      }
      assert.deepEqual(statuses, [400, 400, 400]);
    } finally {
      await connection.close();
    }
  });

  test('a malformed multipart body is a 400, and a PNG header declaring more than 8192 pixels a side is refused unread', async () => {
    for (const [contentType, body] of [
      ['multipart/form-data; boundary=xx', 'garbage without a boundary'],
      ['multipart/form-data', '--xx\r\n'],
      ['multipart/form-data; boundary=xx', '--xx\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n\r\nabc'],
    ]) {
      const response = await fetch(`${gateway.baseUrl}/v1/images/edits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': contentType },
        body,
      });
      assert.equal(response.status, 400, body);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'invalid_value');
    }
    // A valid small PNG whose header is rewritten to claim 100000x100000 pixels (a decompression bomb's shape).
    const bomb = Buffer.from(smallPng());
    bomb.writeUInt32BE(100_000, 16);
    bomb.writeUInt32BE(100_000, 20);
    assertError(await editJson(gateway, { ...fields, image: bomb.toString('base64') }), {
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_value',
      param: 'image',
    });
  });

  test('mask rules: only with capabilities.image_mask, and of the image size', async () => {
    const image = smallPng().toString('base64');
    assertError(await editJson(gateway, { ...fields, model: 'gateway/no-mask', image, mask: image }), {
      status: 400,
      type: 'invalid_request_error',
      code: 'unsupported_parameter',
      param: 'mask',
    });
    assert.equal((await editJson(gateway, { ...fields, model: 'gateway/no-mask', image })).status, 200);
    assertError(await editJson(gateway, { ...fields, image, mask: smallPng(4, 4).toString('base64') }), {
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_value',
      param: 'mask',
    });
  });

  test('field rules: n 1..4, a model that does not edit, required fields, unknown fields and files', async () => {
    const image = smallPng().toString('base64');
    const invalid = async (body: Record<string, unknown>, param: string, code = 'invalid_value') =>
      assertError(await editJson(gateway, { ...fields, image, ...body }), { status: 400, type: 'invalid_request_error', code, param });
    await invalid({ n: 5 }, 'n');
    await invalid({ n: 0 }, 'n');
    await invalid({ quality: 'high' }, 'quality');
    await invalid({ size: '9000x10' }, 'size');
    await invalid({ model: 'gateway/no-edit' }, 'prompt', 'unsupported_parameter');
    assertError(await editJson(gateway, { model: 'gateway/editor', prompt: 'p' }), {
      status: 400,
      type: 'invalid_request_error',
      code: 'missing_required_parameter',
      param: 'image',
    });
    assertError(await editMultipart(gateway, { ...fields, n: 'two' }, { image: smallPng() }), {
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_value',
      param: 'n',
    });
    assertError(await editMultipart(gateway, fields, { image: smallPng(), extra: smallPng() }), {
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_value',
      param: 'extra',
    });
  });

  test('an Idempotency-Key on a multipart edit covers its file bytes', async () => {
    const headers = { 'idempotency-key': 'edit-once' };
    const first = await editMultipart(gateway, fields, { image: smallPng() }, headers);
    const replay = await editMultipart(gateway, fields, { image: smallPng() }, headers);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.text, first.text);
    assertError(await editMultipart(gateway, fields, { image: smallPng(8, 9) }, headers), {
      status: 409,
      type: 'invalid_request_error',
      code: 'idempotency_key_reused',
    });
  });

  test('GET /openapi.json describes both image routes, edits in JSON and multipart', async () => {
    const response = await fetch(`${gateway.baseUrl}/openapi.json`);
    const paths = ((await response.json()) as { paths: Record<string, { post?: { requestBody?: { content?: object } } }> }).paths;
    assert.deepEqual(Object.keys(paths['/v1/images/generations'].post?.requestBody?.content ?? {}), ['application/json']);
    assert.deepEqual(Object.keys(paths['/v1/images/edits'].post?.requestBody?.content ?? {}).sort(), ['application/json', 'multipart/form-data']);
  });

  describe('size limits', () => {
    // About 2.3 MiB of incompressible PNG: under every limit on its own.
    const image = noisePng(900, 900);

    test('multipart: just under 4 MiB passes, just over is 413', async () => {
      const files = { image, mask: noisePng(900, 900).subarray(0, 0) };
      delete (files as Partial<typeof files>).mask;
      const bare = await multipartSize(fields, { image });
      const padTo = async (target: number) => {
        // `user` is a free string: it pads the body to the byte.
        const probe = await multipartSize({ ...fields, user: '' }, { image });
        return { ...fields, user: 'u'.repeat(target - probe) };
      };
      assert.ok(bare < 4 * MiB);
      const under = await padTo(4 * MiB);
      assert.equal(await multipartSize(under, { image }), 4 * MiB);
      const passed = await editMultipart(gateway, under, { image });
      assert.equal(passed.status, 200, passed.text.slice(0, 300));
      const over = { ...under, user: `${under.user}u` };
      assertError(await editMultipart(gateway, over, { image }), { status: 413, type: 'invalid_request_error', code: 'request_too_large' });
    });

    test('multipart: a file whose base64 would pass 5 MiB is 413, one just under passes', async () => {
      // 5 MiB of base64 is 3.75 MiB of bytes.
      const limit = (5 * MiB * 3) / 4;
      const padded = (bytes: number) => Buffer.concat([image, Buffer.alloc(bytes - image.length)]);
      // Trailing bytes after IEND are ignored by the PNG decoder, so the file stays valid.
      const passed = await editMultipart(gateway, fields, { image: padded(limit) });
      assert.equal(passed.status, 200, passed.text.slice(0, 300));
      assertError(await editMultipart(gateway, fields, { image: padded(limit + 1) }), {
        status: 413,
        type: 'invalid_request_error',
        code: 'request_too_large',
      });
    });

    test('JSON: a body just under 5 MiB passes, just over is 413', async () => {
      const body = { ...fields, image: image.toString('base64'), user: '' };
      const size = Buffer.byteLength(JSON.stringify(body));
      const under = { ...body, user: 'u'.repeat(5 * MiB - size) };
      assert.equal(Buffer.byteLength(JSON.stringify(under)), 5 * MiB);
      const passed = await editJson(gateway, under);
      assert.equal(passed.status, 200, passed.text.slice(0, 300));
      assertError(await editJson(gateway, { ...under, user: `${under.user}u` }), { status: 413, type: 'invalid_request_error', code: 'request_too_large' });
    });

    test('a chunked multipart body with no declared length is refused once it passes 4 MiB, not after it ends', async () => {
      const answer = await new Promise<{ status: number; written: number; body: string }>((resolve, reject) => {
        const url = new URL(`${gateway.baseUrl}/v1/images/edits`);
        let written = 0;
        let answered = false;
        const outgoing = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'multipart/form-data; boundary=xx', 'transfer-encoding': 'chunked' },
          },
          (response) => {
            let body = '';
            response.on('data', (chunk) => (body += chunk));
            response.on('end', () => {
              resolve({ status: response.statusCode!, written, body });
              outgoing.destroy();
            });
            answered = true;
          },
        );
        outgoing.on('error', (error) => (written > 0 ? undefined : reject(error)));
        const head = Buffer.from('--xx\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n');
        const chunk = Buffer.alloc(64 * 1024, 0x41);
        // Up to 64 MiB, one chunk at a time: the answer must come soon after 4 MiB (socket buffers hold a few more).
        const pump = () => {
          while (written < 64 * MiB && !answered && !outgoing.destroyed) {
            written += chunk.length;
            if (!outgoing.write(chunk)) return void outgoing.once('drain', pump);
          }
        };
        outgoing.write(head);
        pump();
      });
      assert.equal(answer.status, 413);
      assert.equal(JSON.parse(answer.body).error.code, 'request_too_large');
      assert.ok(answer.written < 16 * MiB, `${answer.written} bytes sent before the answer`);
    });

    test('a declared body over the limit is refused before it is read', async () => {
      const multipart = await declaredOnly(gateway, 'multipart/form-data; boundary=x', 4 * MiB + 1, 10);
      assert.equal(multipart.status, 413);
      assert.equal(JSON.parse(multipart.body).error.code, 'request_too_large');
      const json = await declaredOnly(gateway, 'application/json', 5 * MiB + 1, 10);
      assert.equal(json.status, 413);
      assert.equal(JSON.parse(json.body).error.code, 'request_too_large');
    });
  });
});
