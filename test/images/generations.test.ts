/**
 * POST /v1/images/generations on the simulated provider: real PNGs of the asked size, exact
 * per-image and per-variant charges, and every field rule of the API (docs/images.md).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { usdToPicos } from '../../src/core/money.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError } from '../helpers/http.ts';
import { flushRequestLog, ledger, newCharges, simulatedConfig } from '../chat/helpers.ts';
import { assertPng, generate, imageEndpoint, imageModel } from './helpers.ts';

const config = simulatedConfig([
  imageModel('gateway/pics', [
    imageEndpoint('sim-pics', {
      pricing: {
        unit: 'per_image',
        per_image: 0.04,
        variants: [
          { key: 'low', price: 0.01 },
          { key: 'medium', price: 0.04 },
          { key: 'high', price: 0.17 },
          { key: 'high:1024x1536', price: 0.25 },
        ],
      },
      limits: { max_images: 6, supported_sizes: ['auto', '1024x1024', '1024x1536', '64x32'], supported_qualities: ['low', 'medium', 'high'] },
      parameters: { 'image-generation': { user: { supported: true, type: 'string' } } },
    }),
  ]),
  imageModel('gateway/free-sizes', [imageEndpoint('sim-free', { limits: {} })]),
  imageModel('gateway/no-quality', [imageEndpoint('sim-nq', { parameters: { 'image-generation': { quality: { supported: false } } } })]),
  imageModel('gateway/diffusion', [
    imageEndpoint('sim-diffusion', {
      pricing: { unit: 'per_image', per_image: 0.003 },
      parameters: {
        'image-generation': {
          'extra_body.gpu_pool.num_inference_steps': { supported: true, type: 'integer', minimum: 1, maximum: 50 },
          'extra_body.gpu_pool.seed': { supported: true, type: 'integer' },
        },
      },
    }),
  ]),
  imageModel('gateway/dear', [imageEndpoint('sim-dear', { pricing: { unit: 'per_image', per_image: 3 } })]),
]);

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`image generation (${engine})`, () => {
    let gateway: TestGateway;
    before(async () => {
      gateway = await startGateway({ engine, config, creditUsd: '5' });
    });
    after(() => gateway.close());

    test('b64_json: valid PNGs of the asked size, charged per image at the variant of the asked quality and size', async () => {
      const before = await ledger(gateway);
      const response = await generate(gateway, {
        model: 'gateway/pics',
        prompt: 'a lighthouse',
        n: 2,
        size: '1024x1536',
        quality: 'hd',
        response_format: 'b64_json',
      });
      assert.equal(response.status, 200, response.text);
      // The answer goes out with its length (sent as its pieces: src/core/json-pieces.ts), not chunked.
      assert.equal(response.headers.get('content-length'), String(Buffer.byteLength(response.text)));
      assert.equal(response.headers.get('transfer-encoding'), null);
      assert.deepEqual(Object.keys(response.body).sort(), ['created', 'data']);
      assert.equal(typeof response.body.created, 'number');
      assert.equal(response.body.data.length, 2);
      for (const datum of response.body.data) assertPng(Buffer.from(datum.b64_json, 'base64'), { width: 1024, height: 1536 });
      assert.notEqual(response.body.data[0].b64_json, response.body.data[1].b64_json);
      // `hd` is `high` in this family, and high:1024x1536 is priced 0.25 an image.
      assert.equal(response.headers.get('x-gateway-cost-usd'), '0.5');
      assert.deepEqual(
        (await newCharges(gateway, before)).map((entry) => entry.amount),
        [usdToPicos('0.5')],
      );
      assert.equal((await ledger(gateway)).balance.reserved, 0n);
    });

    test('the same request draws the same images', async () => {
      const body = { model: 'gateway/pics', prompt: 'same', size: '64x32', response_format: 'b64_json' };
      const first = await generate(gateway, body);
      const second = await generate(gateway, body);
      assert.equal(first.body.data[0].b64_json, second.body.data[0].b64_json);
      assertPng(Buffer.from(first.body.data[0].b64_json, 'base64'), { width: 64, height: 32 });
    });

    test('quality aliases: standard is medium, omission is medium, low is itself', async () => {
      const cost = async (quality?: string) => {
        const response = await generate(gateway, {
          model: 'gateway/pics',
          prompt: 'q',
          size: '64x32',
          response_format: 'b64_json',
          ...(quality ? { quality } : {}),
        });
        assert.equal(response.status, 200, response.text);
        return response.headers.get('x-gateway-cost-usd');
      };
      assert.equal(await cost('standard'), '0.04');
      assert.equal(await cost(), '0.04');
      assert.equal(await cost('low'), '0.01');
      assert.equal(await cost('high'), '0.17');
    });

    test('an explicit quality is refused where the route rejects it; omission passes', async () => {
      assertError(await generate(gateway, { model: 'gateway/no-quality', prompt: 'q', quality: 'high', response_format: 'b64_json' }), {
        status: 400,
        type: 'invalid_request_error',
        code: 'unsupported_parameter',
        param: 'quality',
      });
      assert.equal((await generate(gateway, { model: 'gateway/no-quality', prompt: 'q', response_format: 'b64_json', size: '16x16' })).status, 200);
    });

    test('a quality outside the route supported list is refused', async () => {
      assertError(await generate(gateway, { model: 'gateway/pics', prompt: 'q', quality: 'auto', response_format: 'b64_json' }), {
        status: 400,
        type: 'invalid_request_error',
        code: 'unsupported_parameter',
        param: 'quality',
      });
    });

    test('size approval: only the route approved sizes; any size where the route lists none; omission keeps the default', async () => {
      assertError(await generate(gateway, { model: 'gateway/pics', prompt: 's', size: '512x512', response_format: 'b64_json' }), {
        status: 400,
        type: 'invalid_request_error',
        code: 'unsupported_parameter',
        param: 'size',
      });
      const free = await generate(gateway, { model: 'gateway/free-sizes', prompt: 's', size: '40x30', response_format: 'b64_json' });
      assert.equal(free.status, 200, free.text);
      assertPng(Buffer.from(free.body.data[0].b64_json, 'base64'), { width: 40, height: 30 });
      const omitted = await generate(gateway, { model: 'gateway/free-sizes', prompt: 's', response_format: 'b64_json' });
      assertPng(Buffer.from(omitted.body.data[0].b64_json, 'base64'), { width: 1024, height: 1024 });
    });

    test('field rules: prompt 1..4000, n 1..10, sizes 1..8192 a side, enums, unknown fields', async () => {
      const base = { model: 'gateway/free-sizes', prompt: 'p', response_format: 'b64_json', size: '8x8' };
      const invalid = async (body: Record<string, unknown>, param: string, code = 'invalid_value') =>
        assertError(await generate(gateway, { ...base, ...body }), { status: 400, type: 'invalid_request_error', code, param });
      await invalid({ prompt: '' }, 'prompt');
      await invalid({ prompt: 'x'.repeat(4001) }, 'prompt');
      assert.equal((await generate(gateway, { ...base, prompt: 'é'.repeat(4000) })).status, 200);
      await invalid({ n: 0 }, 'n');
      await invalid({ n: 11 }, 'n');
      await invalid({ n: '2' }, 'n');
      await invalid({ n: 1.5 }, 'n');
      await invalid({ size: '0x10' }, 'size');
      await invalid({ size: '8193x10' }, 'size');
      await invalid({ size: '10x8193' }, 'size');
      await invalid({ size: '10 x 10' }, 'size');
      await invalid({ quality: 'ultra' }, 'quality');
      await invalid({ response_format: 'base64' }, 'response_format');
      await invalid({ user: 5 }, 'user');
      await invalid({ style: 'vivid' }, 'style');
      assertError(await generate(gateway, { prompt: 'p' }), { status: 400, type: 'invalid_request_error', code: 'missing_required_parameter', param: 'model' });
      assertError(await generate(gateway, { model: 'gateway/pics' }), {
        status: 400,
        type: 'invalid_request_error',
        code: 'missing_required_parameter',
        param: 'prompt',
      });
      const big = await generate(gateway, { model: 'gateway/free-sizes', prompt: 'p', response_format: 'b64_json', size: '8192x1' });
      assert.equal(big.status, 200, big.text);
    });

    test('n above the route max_images is refused before any credit moves', async () => {
      const before = await ledger(gateway);
      assertError(await generate(gateway, { model: 'gateway/pics', prompt: 'n', n: 7, response_format: 'b64_json' }), {
        status: 400,
        type: 'invalid_request_error',
        code: 'invalid_value',
        param: 'n',
      });
      assert.deepEqual(await newCharges(gateway, before), []);
    });

    test('extra_body: only the gpu_pool group and its keys, each approved by the route, within its bounds', async () => {
      const base = { model: 'gateway/diffusion', prompt: 'e', size: '16x16', response_format: 'b64_json' };
      const refused = async (extra: unknown, param: string, code = 'unsupported_parameter') =>
        assertError(await generate(gateway, { ...base, extra_body: extra }), { status: 400, type: 'invalid_request_error', code, param });
      await refused({ cloud_a: { seed: 1 } }, 'extra_body.cloud_a');
      await refused({ gpu_pool: { top_k: 1 } }, 'extra_body.gpu_pool.top_k');
      await refused({ gpu_pool: { guidance_scale: 5 } }, 'extra_body.gpu_pool.guidance_scale');
      await refused({ gpu_pool: { num_inference_steps: 51 } }, 'extra_body.gpu_pool.num_inference_steps');
      await refused({ gpu_pool: { num_inference_steps: 0 } }, 'extra_body.gpu_pool.num_inference_steps', 'invalid_value');
      await refused({ gpu_pool: { seed: 2147483648 } }, 'extra_body.gpu_pool.seed', 'invalid_value');
      await refused({ gpu_pool: { negative_prompt: 'x'.repeat(4001) } }, 'extra_body.gpu_pool.negative_prompt', 'invalid_value');
      assertError(await generate(gateway, { ...base, model: 'gateway/free-sizes', extra_body: { gpu_pool: { seed: 1 } } }), {
        status: 400,
        type: 'invalid_request_error',
        code: 'unsupported_parameter',
        param: 'extra_body.gpu_pool.seed',
      });
      const seeded = async (seed: number) =>
        (await generate(gateway, { ...base, extra_body: { gpu_pool: { num_inference_steps: 50, seed } } })).body.data[0].b64_json;
      assert.equal(await seeded(1), await seeded(1));
      assert.notEqual(await seeded(1), await seeded(2));
    });

    test('response_format url (the default): signed URLs of the gateway itself, the images stored as PNG files', async () => {
      for (const body of [
        { model: 'gateway/pics', prompt: 'u', n: 2, size: '64x32' },
        { model: 'gateway/pics', prompt: 'u', size: '64x32', response_format: 'url' },
      ]) {
        const response = await generate(gateway, body);
        assert.equal(response.status, 200, response.text);
        const requestId = response.headers.get('x-gateway-request-id')!;
        response.body.data.forEach((datum: { url: string; b64_json?: string }, index: number) => {
          assert.equal(datum.b64_json, undefined);
          const url = new URL(datum.url);
          assert.equal(url.origin, gateway.baseUrl);
          assert.equal(url.pathname, `/v1/outputs/${requestId}/files/image-${index}.png`);
          assert.match(url.searchParams.get('expires') ?? '', /^\d+$/);
          assert.match(url.searchParams.get('signature') ?? '', /.+/);
        });
        for (let index = 0; index < response.body.data.length; index++) {
          const stored = await gateway.deps.outputs.readOutputFile(requestId, `image-${index}.png`);
          assert.ok(stored, 'the image is stored');
          assert.equal(stored.contentType, 'image/png');
          const chunks: Buffer[] = [];
          for await (const chunk of stored.stream) chunks.push(chunk as Buffer);
          assertPng(Buffer.concat(chunks), { width: 64, height: 32 });
        }
      }
    });

    test('b64_json images are stored as output files too', async () => {
      const response = await generate(gateway, { model: 'gateway/pics', prompt: 'kept', size: '64x32', response_format: 'b64_json' });
      const files = await gateway.deps.outputs.listOutputFiles(response.headers.get('x-gateway-request-id')!);
      assert.deepEqual(
        files.map((file) => [file.name, file.size]),
        [['image-0.png', Buffer.from(response.body.data[0].b64_json, 'base64').length]],
      );
      // The request log row names the file instead of repeating its base64.
      await flushRequestLog(gateway);
      const row = await gateway.store.getRequest(response.headers.get('x-gateway-request-id')!);
      assert.equal(row?.route, 'images.generations');
      assert.equal(row?.images, 1);
      assert.deepEqual(row?.output, { created: response.body.created, data: [{ file: 'image-0.png' }] });
      assert.equal(row?.cost, usdToPicos('0.04'));
    });

    test('user is accepted where the route approves it', async () => {
      assert.equal(
        (await generate(gateway, { model: 'gateway/pics', prompt: 'u', size: '64x32', user: 'end-user-1', response_format: 'b64_json' })).status,
        200,
      );
    });

    test('a quote above the balance is 402, nothing held', async () => {
      assertError(await generate(gateway, { model: 'gateway/dear', prompt: 'd', n: 2, size: '8x8', response_format: 'b64_json' }), {
        status: 402,
        type: 'insufficient_quota_error',
        code: 'insufficient_quota',
      });
      assert.equal((await ledger(gateway)).balance.reserved, 0n);
    });

    test('an image model is not a text model, and a text model is not an image model', async () => {
      assertError(await generate(gateway, { model: 'gateway/nope', prompt: 'x', response_format: 'b64_json' }), {
        status: 404,
        type: 'invalid_request_error',
        code: 'model_not_found',
      });
    });

    test('an Idempotency-Key replays the images and the cost header, charging once', async () => {
      const before = await ledger(gateway);
      const headers = { 'idempotency-key': `images-${engine}` };
      const body = { model: 'gateway/pics', prompt: 'idem', size: '64x32', response_format: 'b64_json' };
      const first = await generate(gateway, body, headers);
      const second = await generate(gateway, body, headers);
      assert.equal(second.status, 200);
      assert.equal(second.headers.get('idempotent-replayed'), 'true');
      assert.equal(second.text, first.text);
      assert.equal(second.headers.get('x-gateway-cost-usd'), '0.04');
      assert.equal((await newCharges(gateway, before)).length, 1);
      assertError(await generate(gateway, { ...body, prompt: 'other' }, headers), {
        status: 409,
        type: 'invalid_request_error',
        code: 'idempotency_key_reused',
      });
    });
  });
}
