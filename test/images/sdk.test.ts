/**
 * End to end with the official `openai` client: images.generate (url and b64_json) and images.edit
 * (multipart with a real PNG and mask), plus a JSON edit, against every image protocol's simulator
 * and the built-in simulated provider. Every downloaded file is a valid PNG; every charge is exact,
 * and an upstream failure after the hold refunds it whole.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { toFile } from 'openai';
import type { ImageGenerateParamsNonStreaming } from 'openai/resources/images';
import type { RecordedRequest, Simulator } from '../simulators/harness.ts';
import { startImagenSimulator, type ImagenSimulator } from '../simulators/imagen.ts';
import { startGpuPoolSimulator, type GpuPoolSimulator } from '../simulators/gpu-pool.ts';
import { assertError, call } from '../helpers/http.ts';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { usdToPicos } from '../../src/core/money.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { ledger, newCharges, openai } from '../chat/helpers.ts';
import { startOpenAIImagesSimulator, seededPng, type OpenAIImagesSimulator } from '../simulators/openai-images.ts';
import { assertPng, editJson, IMAGE_CAPABILITIES } from './helpers.ts';

const KEY = 'sk-images-upstream';

/** The last image call (a URL upstream also sees the gateway download its files). */
function lastPost(simulator: Simulator): RecordedRequest {
  return simulator.requests.filter((request) => request.method === 'POST').at(-1)!;
}

interface Upstream {
  readonly name: string;
  readonly model: string;
  /** The upstream simulator, when there is one (the simulated provider has none). */
  readonly simulator?: () => Simulator;
  /** The family takes `quality` (with the aliases), masks, and a size on edits. */
  readonly quality: boolean;
  readonly mask: boolean;
  readonly editSize: boolean;
  /** The upstream speaks OpenAI Images (its request body is checked). */
  readonly openai?: boolean;
  /** Fields of its answer given a wrong type or an impossible value, each a malformed answer. */
  readonly wrongTyped?: readonly { readonly path: readonly (string | number)[]; readonly value: unknown }[];
}

describe('images with the openai SDK', () => {
  let gpt: OpenAIImagesSimulator;
  let dalle: OpenAIImagesSimulator;
  let imagen: ImagenSimulator;
  let pool: GpuPoolSimulator;
  let gateway: TestGateway;

  const aliased = { quality: true, mask: true, editSize: true };
  const upstreams: Upstream[] = [
    {
      name: 'OpenAI Images (b64_json upstream)',
      model: 'gateway/gpt-pics',
      simulator: () => gpt,
      openai: true,
      ...aliased,
      wrongTyped: [
        { path: ['data', 0, 'b64_json'], value: 42 },
        { path: ['usage', 'output_tokens'], value: 5.5 },
      ],
    },
    {
      name: 'OpenAI Images (URL upstream)',
      model: 'gateway/dalle-pics',
      simulator: () => dalle,
      openai: true,
      ...aliased,
      wrongTyped: [
        { path: ['data', 0, 'url'], value: { href: 'x' } },
        { path: ['usage', 'total_tokens'], value: '7' },
      ],
    },
    {
      name: 'Imagen :predict',
      model: 'gateway/imagen-pics',
      simulator: () => imagen,
      quality: false,
      mask: true,
      editSize: false,
      wrongTyped: [
        { path: ['predictions', 0, 'bytesBase64Encoded'], value: 7 },
        { path: ['predictions'], value: { 0: {} } },
      ],
    },
    {
      name: 'the gpu-pool',
      model: 'gateway/pool-pics',
      simulator: () => pool,
      quality: false,
      mask: false,
      editSize: true,
      wrongTyped: [
        { path: ['data', 0], value: 'image' },
        { path: ['data', 0, 'b64_json'], value: true },
      ],
    },
    { name: 'the simulated provider', model: 'gateway/sim-pics', ...aliased },
  ];

  before(async () => {
    gpt = await startOpenAIImagesSimulator({ apiKey: KEY });
    dalle = await startOpenAIImagesSimulator({ apiKey: KEY, urls: true });
    imagen = await startImagenSimulator(KEY);
    pool = await startGpuPoolSimulator(KEY);
    const route = (provider: string, upstreamModel: string, qualities = true) => ({
      provider,
      model: upstreamModel,
      supply: 'first_party' as const,
      training_use: 'never' as const,
      pricing: { unit: 'per_image' as const, per_image: 0.02, ...(qualities ? { variants: [{ key: 'high', price: 0.08 }] } : {}) },
      capabilities: IMAGE_CAPABILITIES,
      limits: {
        max_images: 4,
        supported_sizes: ['auto', '16x16', '1024x1024'],
        ...(qualities ? { supported_qualities: ['low', 'medium', 'high'] } : {}),
      },
      parameters: {
        'image-generation': {
          'extra_body.gpu_pool.num_inference_steps': { type: 'integer' as const, minimum: 1, maximum: 50 },
          'extra_body.gpu_pool.seed': { type: 'integer' as const },
          'extra_body.gpu_pool.negative_prompt': { type: 'string' as const },
        },
      },
    });
    const model = (id: string, endpoint: ReturnType<typeof route>) => ({
      id,
      name: id,
      owned_by: 'tests',
      category: 'IMAGE' as const,
      type: 'image',
      input_modalities: ['text', 'image'],
      output_modalities: ['image'],
      endpoints: [endpoint],
    });
    const config: GatewayConfig = {
      providers: [
        { id: 'gpt', kind: 'openai-images', base_url: gpt.baseUrl, api_key_env: 'IMAGES_KEY' },
        { id: 'dalle', kind: 'openai-images', base_url: dalle.baseUrl, api_key_env: 'IMAGES_KEY' },
        { id: 'imagen', kind: 'gemini', base_url: imagen.baseUrl, api_key_env: 'IMAGES_KEY' },
        { id: 'pool', kind: 'gpu-pool', base_url: pool.baseUrl, api_key_env: 'IMAGES_KEY' },
        { id: 'sim', kind: 'simulated' },
      ],
      models: [
        model('gateway/gpt-pics', route('gpt', 'gpt-image-1')),
        model('gateway/dalle-pics', route('dalle', 'dall-e-3')),
        model('gateway/imagen-pics', route('imagen', 'imagen-4.0-generate-001', false)),
        model('gateway/pool-pics', route('pool', 'flux-schnell', false)),
        model('gateway/sim-pics', route('sim', 'sim-pics')),
        {
          ...model('gateway/two-routes', route('gpt', 'gpt-image-1')),
          endpoints: [route('gpt', 'gpt-image-1'), { ...route('dalle', 'dall-e-3'), pricing: { unit: 'per_image' as const, per_image: 0.03 } }],
        },
      ],
    };
    gateway = await startGateway({ config, env: { IMAGES_KEY: KEY }, creditUsd: '10' });
  });
  after(async () => {
    await gateway.close();
    await gpt.close();
    await dalle.close();
    await imagen.close();
    await pool.close();
  });

  async function download(url: string): Promise<Buffer> {
    const response = await fetch(url);
    assert.equal(response.status, 200, url);
    assert.equal(response.headers.get('content-type'), 'image/png');
    return Buffer.from(await response.arrayBuffer());
  }

  for (const upstream of upstreams) {
    describe(upstream.name, () => {
      test('images.generate with b64_json: PNGs, charged exactly per image', async () => {
        const before = await ledger(gateway);
        const result = await openai(gateway).images.generate({ model: upstream.model, prompt: 'a red kite', n: 2, size: '16x16', response_format: 'b64_json' });
        assert.equal(result.data?.length, 2);
        for (const image of result.data!) assertPng(Buffer.from(image.b64_json!, 'base64'), { width: 16, height: 16 });
        assert.deepEqual(
          (await newCharges(gateway, before)).map((entry) => entry.amount),
          [usdToPicos('0.04')],
        );
        assert.equal((await ledger(gateway)).balance.reserved, 0n);
        if (upstream.openai) {
          const sent = lastPost(upstream.simulator!());
          // An omitted quality is `medium` in this family; no response_format goes upstream.
          assert.deepEqual(sent.body, {
            model: upstream.model === 'gateway/gpt-pics' ? 'gpt-image-1' : 'dall-e-3',
            prompt: 'a red kite',
            n: 2,
            size: '16x16',
            quality: 'medium',
          });
          assert.equal(sent.headers.authorization, `Bearer ${KEY}`);
        }
      });

      test('images.generate with url (the default): gateway URLs that download as PNGs; hd is billed as high where the family aliases it', async () => {
        const before = await ledger(gateway);
        const params: ImageGenerateParamsNonStreaming = {
          model: upstream.model,
          prompt: 'a blue kite',
          size: '16x16' as never,
          ...(upstream.quality ? { quality: 'hd' as const } : {}),
        };
        const response = await openai(gateway).images.generate(params).withResponse();
        const price = upstream.quality ? '0.08' : '0.02';
        assert.equal(response.response.headers.get('x-gateway-cost-usd'), price);
        const [image] = response.data.data!;
        assert.ok(image.url?.startsWith(`${gateway.baseUrl}/v1/outputs/`), String(image.url));
        assertPng(await download(image.url!), { width: 16, height: 16 });
        assert.deepEqual(
          (await newCharges(gateway, before)).map((entry) => entry.amount),
          [usdToPicos(price)],
        );
        if (upstream.openai) assert.equal(lastPost(upstream.simulator!()).body.quality, 'high');
        if (upstream.model !== 'gateway/gpt-pics') return;
        assert.deepEqual(response.data.usage, {
          input_tokens: 12,
          input_tokens_details: { text_tokens: 10, image_tokens: 2 },
          output_tokens: 272,
          total_tokens: 284,
        });
      });

      test('images.edit: a multipart upload of a real PNG and mask', async () => {
        const before = await ledger(gateway);
        const source = seededPng('source', 16, 16);
        const result = await openai(gateway).images.edit({
          model: upstream.model,
          prompt: 'add a sun',
          image: await toFile(source, 'source.png', { type: 'image/png' }),
          ...(upstream.editSize ? { size: '16x16' as never } : {}),
          ...(upstream.mask ? { mask: await toFile(seededPng('mask', 16, 16), 'mask.png', { type: 'image/png' }) } : {}),
          response_format: 'b64_json',
        });
        assertPng(Buffer.from(result.data![0].b64_json!, 'base64'), { width: 16, height: 16 });
        assert.deepEqual(
          (await newCharges(gateway, before)).map((entry) => entry.amount),
          [usdToPicos('0.02')],
        );
        if (upstream.openai) {
          const edit = (upstream.simulator!() as OpenAIImagesSimulator).edits.at(-1)!;
          assert.deepEqual(edit.image, { bytes: source.length, type: 'image/png', name: 'image.png' });
          assert.equal((edit.mask as { type: string }).type, 'image/png');
          assert.equal(edit.prompt, 'add a sun');
        }
      });

      test('a JSON edit with base64 files, answered with a URL', async () => {
        const response = await editJson(gateway, {
          model: upstream.model,
          prompt: 'add a moon',
          image: seededPng('json source').toString('base64'),
          ...(upstream.editSize ? { size: '16x16' } : {}),
        });
        assert.equal(response.status, 200, response.text);
        assertPng(await download(response.body.data[0].url), { width: 16, height: 16 });
      });

      if (upstream.simulator) {
        test('an upstream failure after the hold refunds it whole', async () => {
          const before = await ledger(gateway);
          upstream.simulator!().enqueue({ kind: 'status', status: 500, message: 'boom' });
          await assert.rejects(openai(gateway).images.generate({ model: upstream.model, prompt: 'fails', n: 3, response_format: 'b64_json' }), { status: 502 });
          assert.deepEqual(await newCharges(gateway, before), []);
          const after = await ledger(gateway);
          assert.equal(after.balance.reserved, 0n);
          assert.equal(after.balance.balance, before.balance.balance);
        });

        test('a malformed upstream answer is a 502 with nothing charged', async () => {
          const before = await ledger(gateway);
          upstream.simulator!().enqueue({ kind: 'truncate', afterEvents: 0 });
          await assert.rejects(openai(gateway).images.generate({ model: upstream.model, prompt: 'broken', response_format: 'b64_json' }), { status: 502 });
          assert.deepEqual(await newCharges(gateway, before), []);
        });

        test('an answer with a wrong-typed field is a clean 502 with nothing charged and the hold released', async () => {
          const before = await ledger(gateway);
          for (const fault of upstream.wrongTyped!) {
            upstream.simulator!().enqueue({ kind: 'retype', ...fault });
            await assert.rejects(
              openai(gateway).images.generate({ model: upstream.model, prompt: 'retyped', response_format: 'b64_json' }),
              (error: { status?: number; error?: { code?: string } }) => {
                assert.equal(error.status, 502, `${JSON.stringify(fault)}`);
                assert.equal(error.error?.code, 'upstream_error');
                return true;
              },
            );
          }
          assert.deepEqual(await newCharges(gateway, before), []);
          const after = await ledger(gateway);
          assert.equal(after.balance.reserved, 0n);
          assert.equal(after.balance.balance, before.balance.balance);
        });
      }
    });
  }

  test('Imagen: a size is sent as its aspect ratio; an image withheld by the safety filter is not charged', async () => {
    const before = await ledger(gateway);
    const result = await openai(gateway).images.generate({
      model: 'gateway/imagen-pics',
      prompt: 'a [filtered] scene',
      n: 2,
      size: '16x16' as never,
      response_format: 'b64_json',
    });
    assert.equal(result.data?.length, 1);
    assert.deepEqual(lastPost(imagen).body, { instances: [{ prompt: 'a [filtered] scene' }], parameters: { sampleCount: 2, aspectRatio: '1:1' } });
    assert.deepEqual(
      (await newCharges(gateway, before)).map((entry) => entry.amount),
      [usdToPicos('0.02')],
    );
    // Every image filtered: a failure, and the hold goes back whole.
    await assert.rejects(openai(gateway).images.generate({ model: 'gateway/imagen-pics', prompt: '[filtered]', response_format: 'b64_json' }), { status: 502 });
    assert.equal((await ledger(gateway)).balance.reserved, 0n);
  });

  test('Imagen: explicit quality, a size on an edit, and user are refused before any credit moves', async () => {
    const image = seededPng('x').toString('base64');
    for (const [path, body, param] of [
      ['/v1/images/generations', { model: 'gateway/imagen-pics', prompt: 'x', quality: 'high' }, 'quality'],
      ['/v1/images/generations', { model: 'gateway/imagen-pics', prompt: 'x', user: 'u1' }, 'user'],
      ['/v1/images/edits', { model: 'gateway/imagen-pics', prompt: 'x', image, size: '16x16' }, 'size'],
    ] as const) {
      const response = await call(gateway.baseUrl, 'POST', path, { key: gateway.apiKey, json: body });
      assertError(response, { status: 400, type: 'invalid_request_error', code: 'unsupported_parameter', param });
    }
  });

  test('gpu-pool: the gpu_pool options reach the upstream under its names; a mask is refused', async () => {
    const response = await call(gateway.baseUrl, 'POST', '/v1/images/generations', {
      key: gateway.apiKey,
      json: {
        model: 'gateway/pool-pics',
        prompt: 'fog',
        size: '16x16',
        response_format: 'b64_json',
        extra_body: { gpu_pool: { num_inference_steps: 4, seed: 7, negative_prompt: 'rain' } },
      },
    });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(lastPost(pool).body, {
      model: 'flux-schnell',
      prompt: 'fog',
      n: 1,
      width: 16,
      height: 16,
      steps: 4,
      seed: 7,
      negative_prompt: 'rain',
      response_format: 'base64',
    });
    const image = seededPng('x').toString('base64');
    assertError(
      await call(gateway.baseUrl, 'POST', '/v1/images/edits', { key: gateway.apiKey, json: { model: 'gateway/pool-pics', prompt: 'x', image, mask: image } }),
      {
        status: 400,
        type: 'invalid_request_error',
        code: 'unsupported_parameter',
        param: 'mask',
      },
    );
  });

  for (const [fault, name] of [
    [{ kind: 'status', status: 503, message: 'overloaded' }, 'a retryable upstream failure'],
    [{ kind: 'retype', path: ['usage', 'output_tokens'], value: -50 }, 'an answer with a negative token count'],
  ] as const) {
    test(`${name} falls back to the next route; the charge is the serving route's`, async () => {
      const before = await ledger(gateway);
      gpt.enqueue(fault);
      const response = await openai(gateway)
        .images.generate({ model: 'gateway/two-routes', prompt: 'fallback', n: 2, size: '16x16' as never, response_format: 'b64_json' })
        .withResponse();
      assert.equal(response.data.data?.length, 2);
      assert.equal(lastPost(dalle).body.prompt, 'fallback');
      assert.equal(response.response.headers.get('x-gateway-cost-usd'), '0.06');
      assert.deepEqual(
        (await newCharges(gateway, before)).map((entry) => entry.amount),
        [usdToPicos('0.06')],
      );
    });
  }

  test('GET /v1/outputs/{requestId} lists the stored images of an image request, each downloadable', async () => {
    const response = await openai(gateway)
      .images.generate({ model: 'gateway/gpt-pics', prompt: 'kept', n: 2, size: '16x16' as never })
      .withResponse();
    const requestId = response.response.headers.get('x-gateway-request-id')!;
    const stored = await call(gateway.baseUrl, 'GET', `/v1/outputs/${requestId}`, { key: gateway.apiKey });
    assert.equal(stored.status, 200, stored.text);
    assert.equal(stored.body.endpoint, '/v1/images/generations');
    const images = (stored.body.outputs as { name: string; url: string; content_type: string }[]).filter((output) => output.content_type === 'image/png');
    assert.deepEqual(
      images.map((output) => output.name),
      ['image-0.png', 'image-1.png'],
    );
    for (const output of images) assertPng(await download(output.url), { width: 16, height: 16 });
  });

  test('the openai-images family cannot send gpu_pool options: refused before any credit moves', async () => {
    const response = await fetch(`${gateway.baseUrl}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gateway/gpt-pics', prompt: 'x', extra_body: { gpu_pool: { seed: 1 } } }),
    });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: { param: string } }).error.param, 'extra_body.gpu_pool.seed');
  });
});
