/**
 * Video generation jobs on the simulated provider, on both stores (docs/video.md): submit → poll
 * (`Retry-After: 5`) → completed → a real, playable MP4 downloaded from a signed URL; the hold for
 * the seconds asked for and the charge for the seconds delivered, at the per-second price or a
 * variant's; every duration and `extra_body` rule as a 400 naming the field with nothing held; the
 * Idempotency-Key ignored; another owner's job and an outputs lookup by job id are 404; a job
 * expires after 24 hours (an injected clock), and its file is swept with it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { usdToPicos } from '../../src/core/money.ts';
import { JOB_LIFETIME_MS } from '../../src/jobs/settings.ts';
import { runMaintenance } from '../../src/storage/maintenance.ts';
import type { OwnerRef } from '../../src/storage/store.ts';
import { chargedOnce, eventually, flushRequestLog, ledger, newCharges } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { download, endedVideo, getVideo, FFPROBE_SKIP, probeVideo, submitVideo, videoEndpoint, videoModel } from './helpers.ts';

const config: GatewayConfig = {
  providers: [{ id: 'sim', kind: 'simulated', simulated: { video_delay_ms: 150 } }],
  models: [
    videoModel('gateway/clip', [
      videoEndpoint('sim-clip', {
        pricing: {
          unit: 'per_second',
          per_second: 0.1,
          variants: [
            { key: '720p', price: 0.05, meta: { resolution: '1280x720' } },
            { key: '1080p', price: 0.2, meta: { resolution: '1920x1080', supported_durations: [8] } },
          ],
        },
        limits: { max_duration_seconds: 8, supported_durations: [4, 6, 8] },
        video: { default_duration_seconds: 8 },
        parameters: {
          video: {
            'extra_body.gpu_pool.seed': { supported: true, type: 'integer' },
            'extra_body.gpu_pool.size': { supported: true, type: 'string', allowed_values: ['256x144', '320x180'] },
            'extra_body.gpu_pool.fps': { supported: true, type: 'integer', maximum: 24 },
            'extra_body.gpu_pool.num_frames': { supported: true, type: 'integer' },
          },
        },
      }),
    ]),
    videoModel('gateway/clip-older', [
      videoEndpoint('sim-older', { limits: { max_duration_seconds: 8, supported_durations: [5, 6, 7, 8] }, video: { default_duration_seconds: 8 } }),
    ]),
    videoModel('gateway/clip-fixed', [
      videoEndpoint('sim-fixed', { limits: { max_duration_seconds: 4 }, video: { default_duration_seconds: 4, explicit_duration: false } }),
    ]),
    videoModel('gateway/clip-any-size', [
      videoEndpoint('sim-any-size', {
        limits: { supported_durations: [1] },
        parameters: { video: { 'extra_body.gpu_pool.size': { supported: true, type: 'string' } } },
      }),
    ]),
    videoModel('gateway/clip-variants', [
      videoEndpoint('sim-variants', { pricing: { unit: 'per_second', variants: [{ key: 'standard', price: 0.07 }] }, video: { default_duration_seconds: 2 } }),
    ]),
  ],
  jobs: { poll_interval_ms: 20 },
  videos: { poll_interval_ms: 20, max_poll_interval_ms: 50 },
};

/**
 * The gateway's clock: real time (a parked job's next look falls due by it), unless a test holds it
 * at a moment (`clock.now = …`) while it looks at what depends on the time.
 */
const clock = {
  heldAt: undefined as number | undefined,
  get now(): number {
    return this.heldAt ?? Date.now();
  },
  set now(at: number) {
    this.heldAt = at;
  },
  release(): void {
    this.heldAt = undefined;
  },
};
const silent = { debug() {}, info() {}, warn() {}, error() {} };

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`video generation (${engine})`, () => {
    let gateway: TestGateway;
    let stranger: string;
    before(async () => {
      clock.release();
      gateway = await startGateway({ engine, config, creditUsd: '20', now: () => clock.now });
      const account = await gateway.store.createAccount({ name: 'stranger' });
      const owner: OwnerRef = { kind: 'account', id: account.id };
      await gateway.store.addCredit(owner, usdToPicos('5'));
      stranger = await gateway.createKey({ owner });
    });
    after(() => gateway.close());
    /** Files the first tests downloaded, for the ffprobe test after them. */
    const downloaded = new Map<'default' | 'sized', Uint8Array>();

    test('submit → processing with Retry-After → completed → a playable MP4 of the seconds asked, charged per second', async () => {
      const before = await ledger(gateway);
      clock.now = Date.now();
      const submitted = await submitVideo(gateway, { model: 'gateway/clip', prompt: 'a paper boat on a pond' });
      assert.equal(submitted.status, 200, submitted.text);
      assert.equal(submitted.headers.get('retry-after'), '5');
      const job = submitted.body;
      assert.match(job.id, /^vid_[0-9a-z]+$/);
      assert.deepEqual(
        { ...job, id: undefined, created: undefined },
        {
          id: undefined,
          object: 'video.generation.job',
          created: undefined,
          model: 'gateway/clip',
          status: 'processing',
          durationSeconds: 8,
          data: [],
          error: null,
        },
      );
      assert.equal(job.created, Math.floor(clock.now / 1000));
      clock.release();
      // The hold is the seconds asked for at the per-second price, in the request.
      assert.equal((await ledger(gateway)).balance.reserved, usdToPicos('0.8'));

      const ended = await endedVideo(gateway, job.id);
      assert.equal(ended.headers.get('retry-after'), null, 'no Retry-After once ended');
      clock.now = Date.now();
      const completed = (await getVideo(gateway, job.id)).body;
      assert.equal(completed.status, 'completed', ended.text);
      assert.equal(completed.durationSeconds, 8);
      assert.equal(completed.error, null);
      assert.equal(completed.data.length, 1);
      const [file] = completed.data;
      assert.equal(file.content_type, 'video/mp4');
      assert.equal(file.duration_seconds, 8);
      assert.ok(file.expires_at > Math.floor(clock.now / 1000) && file.expires_at <= Math.floor(clock.now / 1000) + 600, 'valid 10 minutes');
      const fetched = await download(file.url);
      assert.equal(fetched.status, 200);
      assert.equal(fetched.contentType, 'video/mp4');
      assert.equal(fetched.bytes.length, file.size);
      downloaded.set('default', fetched.bytes);
      await chargedOnce(gateway, before, '0.8');
      // The seconds delivered are in the request's row, and so in the usage rollups.
      await flushRequestLog(gateway);
      const usage = await gateway.store.usage({
        grain: 'day',
        from: 0,
        to: Number.MAX_SAFE_INTEGER,
        filter: { account: gateway.account.id, route: 'videos.generations', status: 'completed' },
        by: null,
      });
      assert.equal(
        usage.reduce((seconds, row) => seconds + row.videoSeconds, 0),
        8,
      );

      // Every poll signs the file afresh.
      clock.now += 1_000;
      const again = (await getVideo(gateway, job.id)).body;
      assert.notEqual(again.data[0].url, file.url);
      assert.equal(again.data[0].expires_at, file.expires_at + 1);
      clock.release();
    });

    test('a variant prices the seconds, and the size, frames and seed of gpu_pool shape the file', async () => {
      const before = await ledger(gateway);
      const submitted = await submitVideo(gateway, {
        model: 'gateway/clip',
        prompt: 'a kite',
        duration: 4,
        pricingVariant: '720p',
        extra_body: { gpu_pool: { size: '320x180', fps: 12, num_frames: 48, seed: 7 } },
      });
      assert.equal(submitted.status, 200, submitted.text);
      assert.equal(submitted.body.durationSeconds, 4);
      assert.equal((await ledger(gateway)).balance.reserved, usdToPicos('0.2'));
      const completed = (await endedVideo(gateway, submitted.body.id)).body;
      assert.equal(completed.status, 'completed');
      downloaded.set('sized', (await download(completed.data[0].url)).bytes);
      await chargedOnce(gateway, before, '0.2');
    });

    test('the downloaded files are H.264 MP4s of the seconds and size asked, as ffprobe reads them', { skip: FFPROBE_SKIP }, async () => {
      const plain = await probeVideo(downloaded.get('default')!);
      assert.deepEqual([plain.codec, plain.width, plain.height], ['h264', 256, 144]);
      assert.ok(Math.abs(plain.durationSeconds - 8) < 0.05, `ffprobe reads ${plain.durationSeconds} s`);
      const sized = await probeVideo(downloaded.get('sized')!);
      assert.deepEqual([sized.codec, sized.width, sized.height], ['h264', 320, 180]);
      assert.ok(Math.abs(sized.durationSeconds - 4) < 0.05, `ffprobe reads ${sized.durationSeconds} s`);
    });

    test('a size the simulated provider cannot draw fails the job naming extra_body.gpu_pool.size, and refunds it', async () => {
      const before = await ledger(gateway);
      const submitted = await submitVideo(gateway, { model: 'gateway/clip-any-size', prompt: 'odd', duration: 1, extra_body: { gpu_pool: { size: '15x15' } } });
      assert.equal(submitted.status, 200, submitted.text);
      const job = (await endedVideo(gateway, submitted.body.id)).body;
      assert.equal(job.status, 'failed');
      assert.equal(job.error.code, 'invalid_value');
      assert.match(job.error.message, /extra_body\.gpu_pool\.size/);
      await eventually(async () => {
        assert.deepEqual(await newCharges(gateway, before), []);
        assert.equal((await ledger(gateway)).balance.reserved, before.balance.reserved);
      });
      const drawable = await submitVideo(gateway, { model: 'gateway/clip-any-size', prompt: 'even', duration: 1, extra_body: { gpu_pool: { size: '16x16' } } });
      assert.equal((await endedVideo(gateway, drawable.body.id)).body.status, 'completed');
      // A job is charged after its end: wait for it, so that the next test's ledger starts after it.
      await chargedOnce(gateway, before, '0.1');
    });

    test('a model priced only per variant takes its variant; the default duration applies', async () => {
      const before = await ledger(gateway);
      const required = await submitVideo(gateway, { model: 'gateway/clip-variants', prompt: 'x' });
      assertError(required, { status: 400, type: 'invalid_request_error', code: 'unsupported_parameter', param: 'pricingVariant' });
      const submitted = await submitVideo(gateway, { model: 'gateway/clip-variants', prompt: 'rain', pricingVariant: 'standard' });
      assert.equal(submitted.status, 200, submitted.text);
      assert.equal(submitted.body.durationSeconds, 2);
      assert.equal((await endedVideo(gateway, submitted.body.id)).body.status, 'completed');
      await chargedOnce(gateway, before, '0.14');
    });

    test('every duration, variant and extra_body rule is a 400 naming the field, and nothing is held', async () => {
      const before = await ledger(gateway);
      const refused: [unknown, string, string?][] = [
        [{ model: 'gateway/clip', prompt: 'x', duration: 5 }, 'duration', 'invalid_value'],
        [{ model: 'gateway/clip', prompt: 'x', duration: 0 }, 'duration'],
        [{ model: 'gateway/clip', prompt: 'x', duration: 121 }, 'duration'],
        [{ model: 'gateway/clip', prompt: 'x', duration: 6.5 }, 'duration'],
        [{ model: 'gateway/clip', prompt: 'x', duration: '8' }, 'duration'],
        [{ model: 'gateway/clip', prompt: 'x', duration: 6, pricingVariant: '1080p' }, 'duration', 'invalid_value'],
        [{ model: 'gateway/clip', prompt: 'x', pricingVariant: '4k' }, 'pricingVariant', 'unsupported_parameter'],
        [{ model: 'gateway/clip-older', prompt: 'x', duration: 4 }, 'duration', 'invalid_value'],
        [{ model: 'gateway/clip-fixed', prompt: 'x', duration: 4 }, 'duration', 'unsupported_parameter'],
        [{ model: 'gateway/clip', prompt: '' }, 'prompt'],
        [{ model: 'gateway/clip', prompt: 'x'.repeat(4001) }, 'prompt'],
        [{ model: 'gateway/clip', prompt: 'x', extra_body: { other: {} } }, 'extra_body.other', 'unsupported_parameter'],
        [{ model: 'gateway/clip', prompt: 'x', extra_body: { gpu_pool: { seed: 1 }, cloud_a: { seed: 1 } } }, 'extra_body.cloud_a', 'unsupported_parameter'],
        [{ model: 'gateway/clip', prompt: 'x', extra_body: { cloud_a: { seed: 1 } } }, 'extra_body.cloud_a', 'unsupported_parameter'],
        [{ model: 'gateway/clip', prompt: 'x', extra_body: { cloud_a: { topK: 1 } } }, 'extra_body.cloud_a.topK', 'unsupported_parameter'],
        [
          { model: 'gateway/clip', prompt: 'x', extra_body: { gpu_pool: { guidance_scale: 3 } } },
          'extra_body.gpu_pool.guidance_scale',
          'unsupported_parameter',
        ],
        [
          { model: 'gateway/clip', prompt: 'x', extra_body: { gpu_pool: { num_inference_steps: 20 } } },
          'extra_body.gpu_pool.num_inference_steps',
          'unsupported_parameter',
        ],
        [{ model: 'gateway/clip', prompt: 'x', extra_body: { gpu_pool: { fps: 12 } } }, 'extra_body.gpu_pool.num_frames', 'invalid_value'],
        [{ model: 'gateway/clip', prompt: 'x', extra_body: { gpu_pool: { num_frames: 12 } } }, 'extra_body.gpu_pool.fps', 'invalid_value'],
        [{ model: 'gateway/clip', prompt: 'x', extra_body: { gpu_pool: { fps: 61, num_frames: 10 } } }, 'extra_body.gpu_pool.fps'],
        [{ model: 'gateway/clip', prompt: 'x', extra_body: { gpu_pool: { fps: 30, num_frames: 120 } } }, 'extra_body.gpu_pool.fps', 'unsupported_parameter'],
        [{ model: 'gateway/clip', prompt: 'x', extra_body: { gpu_pool: { fps: 12, num_frames: 60 } } }, 'extra_body.gpu_pool.num_frames', 'invalid_value'],
        [
          { model: 'gateway/clip', prompt: 'x', duration: 8, extra_body: { gpu_pool: { fps: 12, num_frames: 48 } } },
          'extra_body.gpu_pool.num_frames',
          'invalid_value',
        ],
        [{ model: 'gateway/clip', prompt: 'x', extra_body: { gpu_pool: { seed: 2147483648 } } }, 'extra_body.gpu_pool.seed'],
        [{ model: 'gateway/clip', prompt: 'x', extra_body: { gpu_pool: { size: '1920x1080' } } }, 'extra_body.gpu_pool.size', 'unsupported_parameter'],
        [{ model: 'gateway/clip', prompt: 'x', extra_body: { gpu_pool: { size: '9000x10' } } }, 'extra_body.gpu_pool.size', 'invalid_value'],
        [{ model: 'gateway/clip', prompt: 'x', seconds: 4 }, 'seconds'],
      ];
      for (const [body, param, code] of refused) {
        const response = await submitVideo(gateway, body);
        assert.equal(response.body.error?.param, param, `${JSON.stringify(body)} → ${response.text}`);
        assertError(response, { status: 400, type: 'invalid_request_error', param, ...(code ? { code } : {}) });
      }
      const after = await ledger(gateway);
      assert.equal(after.balance.reserved, before.balance.reserved, 'nothing held');
      assert.deepEqual(await newCharges(gateway, before), []);
      const unknown = await submitVideo(gateway, { model: 'gateway/nope', prompt: 'x' });
      assertError(unknown, { status: 404, type: 'invalid_request_error', code: 'model_not_found' });
      const chat = await submitVideo(gateway, { model: 'gateway/clip', prompt: 'x', stream: true });
      assertError(chat, { status: 400, type: 'invalid_request_error', param: 'stream' });
    });

    test('an Idempotency-Key is ignored: each submission is its own job', async () => {
      const headers = { 'idempotency-key': 'same-key' };
      const first = await submitVideo(gateway, { model: 'gateway/clip-fixed', prompt: 'twice' }, headers);
      const second = await submitVideo(gateway, { model: 'gateway/clip-fixed', prompt: 'twice' }, headers);
      assert.equal(first.status, 200, first.text);
      assert.equal(second.status, 200, second.text);
      assert.notEqual(first.body.id, second.body.id);
      for (const id of [first.body.id, second.body.id]) assert.equal((await endedVideo(gateway, id)).body.status, 'completed');
    });

    test("another owner's job, an unknown id and an outputs lookup by job id are 404", async () => {
      const submitted = await submitVideo(gateway, { model: 'gateway/clip-fixed', prompt: 'mine' });
      const id = submitted.body.id;
      assertError(await getVideo(gateway, id, stranger), { status: 404, type: 'invalid_request_error', code: 'not_found' });
      assertError(await getVideo(gateway, 'vid_unknown'), { status: 404, type: 'invalid_request_error', code: 'not_found' });
      await endedVideo(gateway, id);
      const outputs = await call(gateway.baseUrl, 'GET', `/v1/outputs/${id}`, { key: gateway.apiKey });
      assertError(outputs, { status: 404, type: 'invalid_request_error', code: 'not_found' });
      const request = submitted.headers.get('x-gateway-request-id')!;
      assert.notEqual(request, id, 'a job id is not a request id');
    });

    test('/openapi.json describes both routes with the schemas that validate them, and the catalog shows the duration rules', async () => {
      const document = (await call(gateway.baseUrl, 'GET', '/openapi.json')).body;
      const submit = document.paths['/v1/videos/generations'].post;
      const body = submit.requestBody.content['application/json'].schema;
      assert.deepEqual(body.required, ['model', 'prompt']);
      assert.deepEqual([body.properties.duration.minimum, body.properties.duration.maximum], [1, 120]);
      assert.deepEqual(submit.responses['200'].content['application/json'].schema.properties.object.enum, ['video.generation.job']);
      assert.ok(document.paths['/v1/videos/generations/{id}'].get);
      const model = (await call(gateway.baseUrl, 'GET', '/v1/models/gateway/clip', { key: gateway.apiKey })).body;
      assert.deepEqual(model.limits, { max_duration_seconds: 8, supported_durations: [4, 6, 8] });
      assert.deepEqual(model.supported_endpoints, ['videos/generations']);
      assert.deepEqual(
        model.pricing.variants.map((variant: { key: string }) => variant.key),
        ['720p', '1080p'],
      );
    });

    test('a job expires 24 hours after its creation: then 404, and the sweep deletes its file', async () => {
      const submitted = await submitVideo(gateway, { model: 'gateway/clip-fixed', prompt: 'short-lived' });
      const id = submitted.body.id;
      const completed = (await endedVideo(gateway, id)).body;
      const created = (await gateway.store.getJob(id))!.createdAt;
      assert.equal(completed.status, 'completed');
      const blobs = gateway.deps.outputs.blobs;
      assert.equal((await gateway.deps.outputs.listOutputFiles(id)).length, 1);
      try {
        clock.now = created + JOB_LIFETIME_MS - 1;
        const lastPoll = await getVideo(gateway, id);
        assert.equal(lastPoll.status, 200, 'still there just before');
        await runMaintenance(gateway.store, clock.now, silent, { store: blobs, lifetimeMs: JOB_LIFETIME_MS });
        assert.equal((await gateway.deps.outputs.listOutputFiles(id)).length, 1);
        clock.now = created + JOB_LIFETIME_MS + 1;
        assertError(await getVideo(gateway, id), { status: 404, type: 'invalid_request_error', code: 'not_found' });
        // A URL signed by the last poll is still within its 10 minutes, but its job has expired.
        assertError(await call(gateway.baseUrl, 'GET', new URL(lastPoll.body.data[0].url).pathname + new URL(lastPoll.body.data[0].url).search), {
          status: 404,
          type: 'invalid_request_error',
          code: 'not_found',
        });
        await runMaintenance(gateway.store, clock.now, silent, { store: blobs, lifetimeMs: JOB_LIFETIME_MS });
        assert.deepEqual(await gateway.deps.outputs.listOutputFiles(id), []);
        assert.equal((await download(completed.data[0].url)).status, 403, 'its URL has expired too');
      } finally {
        clock.release();
      }
    });
  });
}
