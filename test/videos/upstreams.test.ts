/**
 * Video jobs over the upstream protocols and their simulators, on both stores (docs/video.md): a
 * Veo-style operation and a GPU pool's queue, each started exactly once per job and polled to its
 * end; an upstream failure, a filtered result and an upstream cancellation refund the hold to the
 * last unit; transient faults while polling and an upstream restart are looked past; a stuck
 * operation is given up at the timeout; the file downloaded from the gateway is the upstream's;
 * ended jobs are announced through signed webhooks (`video.completed`, `video.failed`).
 */
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { after, afterEach, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import type { GatewayConfig } from '../../src/config/schema.ts';
import type { JobRecord } from '../../src/storage/store.ts';
import { chargedOnce, eventually, ledger, newCharges } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { startGpuPoolVideoSimulator, type GpuPoolVideoSimulator } from '../simulators/gpu-pool-video.ts';
import { startVeoSimulator, type VeoSimulator } from '../simulators/veo.ts';
import { videoBytes } from '../simulators/video-bytes.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { download, endedVideo, submitVideo, videoEndpoint, videoModel } from './helpers.ts';

const VEO_KEY = 'veo-key';
const POOL_KEY = 'pool-key';
const ADMIN_KEY = 'admin-secret-for-video-tests';

function configFor(veo: VeoSimulator, pool: GpuPoolVideoSimulator): GatewayConfig {
  return {
    providers: [
      { id: 'veo', kind: 'gemini', base_url: veo.baseUrl, api_key_env: 'VEO_KEY', timeout_ms: 5_000 },
      { id: 'pool', kind: 'gpu-pool', base_url: pool.baseUrl, api_key_env: 'POOL_KEY', timeout_ms: 5_000 },
    ],
    models: [
      videoModel('gateway/veo', [
        videoEndpoint('veo-3.0-generate', {
          provider: 'veo',
          pricing: { unit: 'per_second', per_second: 0.4, variants: [{ key: '1080p', price: 0.5, meta: { resolution: '1080p', supported_durations: [8] } }] },
          limits: { max_duration_seconds: 8, supported_durations: [4, 6, 8] },
          video: { default_duration_seconds: 8 },
        }),
      ]),
      videoModel('gateway/pool', [
        videoEndpoint('acme/wan-video/text-to-video', {
          provider: 'pool',
          pricing: { unit: 'per_second', per_second: 0.05 },
          limits: { max_duration_seconds: 10 },
          video: { default_duration_seconds: 5 },
          parameters: {
            video: {
              'extra_body.gpu_pool.seed': { supported: true, type: 'integer' },
              'extra_body.gpu_pool.fps': { supported: true, type: 'integer' },
              'extra_body.gpu_pool.num_frames': { supported: true, type: 'integer' },
              'extra_body.gpu_pool.size': { supported: true, type: 'string' },
            },
          },
        }),
      ]),
    ],
    jobs: { poll_interval_ms: 20 },
    // The stuck operation waits this long; the others finish in a few looks, even on a busy machine.
    videos: { poll_interval_ms: 20, max_poll_interval_ms: 40, timeout_seconds: 10 },
    webhooks: { allow_private_addresses: true, poll_interval_ms: 20, retry_base_ms: 20, retry_max_ms: 100, timeout_ms: 2_000 },
  };
}

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`video jobs over upstream protocols (${engine})`, () => {
    let veo: VeoSimulator;
    let pool: GpuPoolVideoSimulator;
    let gateway: TestGateway;
    let receiver: Receiver;
    let secret: string;
    /** What the gateway logged at warn and above. */
    const logged: Record<string, any>[] = [];
    before(async () => {
      veo = await startVeoSimulator({ apiKey: VEO_KEY, runningPolls: 2 });
      pool = await startGpuPoolVideoSimulator({ apiKey: POOL_KEY, runningPolls: 2 });
      gateway = await startGateway({
        engine,
        config: configFor(veo, pool),
        env: { VEO_KEY, POOL_KEY },
        creditUsd: '20',
        adminKey: ADMIN_KEY,
        logger: pino({ level: 'warn', base: undefined }, { write: (line: string) => logged.push(JSON.parse(line)) }),
      });
      receiver = await startReceiver();
      const registered = await call(gateway.baseUrl, 'POST', '/admin/v1/webhooks', {
        key: ADMIN_KEY,
        json: { account_id: gateway.account.id, url: receiver.url, event_types: ['video.completed', 'video.failed', 'video.cancelled'] },
      });
      assert.equal(registered.status, 200, registered.text);
      secret = registered.body.secret;
    });
    after(async () => {
      await gateway.close();
      await Promise.all([veo.close(), pool.close(), receiver.close()]);
    });
    // A test that failed before its job took the faults it queued would hand them to the next test.
    afterEach(() => {
      veo.clearQueue();
      pool.clearQueue();
    });

    /** The parts of a job's row that say who runs it and when it moves next (times relative to `now`, ms). */
    const jobState = (job: JobRecord | null, now: number) =>
      job && {
        status: job.status,
        attempts: job.attempts,
        leaseOwner: job.leaseOwner,
        leaseEndsIn: job.leaseUntil === null ? null : job.leaseUntil - now,
        nextAttemptIn: job.nextAttemptAt === null ? null : job.nextAttemptAt - now,
        updatedAgo: now - job.updatedAt,
        dispatchedAgo: job.dispatchedAt === null ? null : now - job.dispatchedAt,
        checkpoint: job.checkpoint,
      };
    /** A job that never ended, from the gateway's side: its row (status, lease, attempts) and the warnings logged. */
    const diagnosis = (jobId: string) => async () =>
      inspect(
        {
          job: jobState(await gateway.store.getJob(jobId), Date.now()),
          warnings: logged.slice(-20),
          // The upstreams' last requests: whether the job was still polled, and what it was answered.
          upstream: [...veo.requests, ...pool.requests].slice(-12).map((request) => `${request.method} ${request.path}`),
        },
        { depth: 6, breakLength: 160 },
      );

    /** The job's hold back in full: no charge since `before`, nothing held. */
    const refunded = (before: Awaited<ReturnType<typeof ledger>>) =>
      eventually(async () => {
        assert.deepEqual(await newCharges(gateway, before), []);
        const now = await ledger(gateway);
        assert.equal(now.balance.reserved, 0n, 'nothing held');
        assert.equal(now.balance.balance, before.balance.balance, 'the balance is as before');
      });
    /** The signed event announcing this job, verified as a customer's receiver would. */
    const announced = (jobId: string) =>
      eventually(async () => {
        for (const request of receiver.received) {
          const event = new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as { type: string; data: { id: string } };
          if (event.data.id === jobId) return event as { type: string; data: Record<string, any> };
        }
        assert.fail(`no event for ${jobId}`);
      });

    test('Veo: one operation started and polled to its end; the file is the upstream’s; charged per second; video.completed announced', async () => {
      const before = await ledger(gateway);
      const startedBefore = veo.started.length;
      const submitted = await submitVideo(gateway, {
        model: 'gateway/veo',
        prompt: 'a lighthouse at dawn',
        pricingVariant: '1080p',
        extra_body: { cloud_a: { seed: 42, negativePrompt: 'fog' } },
      });
      assert.equal(submitted.status, 200, submitted.text);
      const job = (await endedVideo(gateway, submitted.body.id, diagnosis(submitted.body.id))).body;
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(veo.started.length, startedBefore + 1, 'one generation');
      const sent = veo.started.at(-1)!.body;
      assert.deepEqual(sent.instances, [{ prompt: 'a lighthouse at dawn' }]);
      assert.equal(sent.parameters.durationSeconds, 8);
      assert.equal(sent.parameters.resolution, '1080p');
      assert.equal(sent.parameters.seed, 42);
      assert.equal(sent.parameters.negativePrompt, 'fog');
      const file = await download(job.data[0].url);
      assert.ok(Buffer.from(file.bytes).equals(videoBytes('a lighthouse at dawn', 8)), 'the upstream file, byte for byte');
      await chargedOnce(gateway, before, '4');
      const event = await announced(job.id);
      assert.equal(event.type, 'video.completed');
      assert.equal(event.data.status, 'completed');
      assert.equal(event.data.data[0].url, undefined, 'an event carries no URL: the receiver polls for a fresh one');
    });

    test('Veo: transient faults and an upstream restart while polling are looked past; still one generation', async () => {
      const before = await ledger(gateway);
      const startedBefore = veo.started.length;
      const submitted = await submitVideo(gateway, { model: 'gateway/veo', prompt: 'waves', duration: 4 });
      assert.equal(submitted.status, 200, submitted.text);
      // The start has gone through; the next looks meet a 503, a reset connection, a 429, and a restart.
      await eventually(async () => assert.equal(veo.started.length, startedBefore + 1));
      veo.enqueue({ kind: 'status', status: 503 }, { kind: 'reset', afterEvents: 0 }, { kind: 'status', status: 429, headers: { 'retry-after': '0' } });
      await veo.restart(2);
      const job = (await endedVideo(gateway, submitted.body.id, diagnosis(submitted.body.id))).body;
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(veo.started.length, startedBefore + 1, 'never started again');
      await chargedOnce(gateway, before, '1.6');
    });

    test('Veo: a look that asks for a longer wait (Retry-After) parks the job that long, then it completes, charged once', async () => {
      const before = await ledger(gateway);
      const submitted = await submitVideo(gateway, { model: 'gateway/veo', prompt: 'a slow tide [retry-after=1]', duration: 4 });
      assert.equal(submitted.status, 200, submitted.text);
      const parked = await eventually(async () => {
        const job = await gateway.store.getJob(submitted.body.id);
        assert.ok(job?.nextAttemptAt, 'parked after its first look');
        return job;
      });
      assert.ok(parked.nextAttemptAt! - parked.updatedAt > 900, 'parked for the second asked, not the 20 to 40 ms of the config');
      const job = (await endedVideo(gateway, submitted.body.id, diagnosis(submitted.body.id))).body;
      assert.equal(job.status, 'completed', JSON.stringify(job));
      await chargedOnce(gateway, before, '1.6');
    });

    const lookCases = [
      { name: 'Veo', model: 'gateway/veo', simulator: () => veo, fault: { kind: 'retype', path: ['done'], value: 'yes' }, charged: '3.2' },
      { name: 'GPU pool', model: 'gateway/pool', simulator: () => pool, fault: { kind: 'retype', path: ['status'], value: 7 }, charged: '0.25' },
    ] as const;
    for (const { name, model, simulator, fault, charged } of lookCases) {
      test(`${name}: a look answered with a wrong-typed field is looked past like a transient fault; still one generation, charged once`, async () => {
        const before = await ledger(gateway);
        const startedBefore = simulator().started.length;
        const submitted = await submitVideo(gateway, { model, prompt: `retyped look ${name}` });
        assert.equal(submitted.status, 200, submitted.text);
        await eventually(async () => assert.equal(simulator().started.length, startedBefore + 1));
        simulator().enqueue(fault, fault);
        const job = (await endedVideo(gateway, submitted.body.id, diagnosis(submitted.body.id))).body;
        assert.equal(job.status, 'completed', JSON.stringify(job));
        assert.equal(simulator().started.length, startedBefore + 1, 'never started again');
        await chargedOnce(gateway, before, charged);
        const looks = logged.filter((line) => line.jobId === job.id && line.msg === 'looking at a video operation failed; looking again later');
        assert.equal(looks.length, 2, 'each malformed look is logged');
        for (const line of looks) {
          assert.equal(line.code, 'upstream_error');
          assert.equal(line.err.type, 'UpstreamBodyMismatch');
          assert.equal(JSON.parse(line.err.body)[fault.path[0]], fault.value, 'with the raw answer');
        }
        assert.ok(!JSON.stringify(logged).includes(name === 'Veo' ? VEO_KEY : POOL_KEY), 'never the key');
      });
    }

    const startCases = [
      { name: 'Veo', model: 'gateway/veo', simulator: () => veo, fault: { kind: 'retype', path: ['name'], value: 42 } },
      { name: 'GPU pool', model: 'gateway/pool', simulator: () => pool, fault: { kind: 'retype', path: ['request_id'], value: { id: 1 } } },
    ] as const;
    for (const { name, model, simulator, fault } of startCases) {
      test(`${name}: a start answered with a wrong-typed field fails the job with an upstream error, refunded exactly`, async () => {
        const before = await ledger(gateway);
        simulator().enqueue(fault);
        const submitted = await submitVideo(gateway, { model, prompt: `retyped start ${name}` });
        assert.equal(submitted.status, 200, submitted.text);
        const job = (await endedVideo(gateway, submitted.body.id, diagnosis(submitted.body.id))).body;
        assert.equal(job.status, 'failed', JSON.stringify(job));
        assert.equal(job.error.code, 'upstream_error');
        await refunded(before);
      });
    }

    const refundCases = [
      { name: 'Veo: an operation error', model: 'gateway/veo', prompt: 'boom [fail]', status: 'failed', event: 'video.failed' },
      { name: 'Veo: a filtered result', model: 'gateway/veo', prompt: 'nope [filtered]', status: 'failed', event: 'video.failed' },
      { name: 'Veo: cancelled upstream', model: 'gateway/veo', prompt: 'stop [cancel]', status: 'cancelled', event: 'video.cancelled' },
      { name: 'GPU pool: a failed run', model: 'gateway/pool', prompt: 'boom [fail]', status: 'failed', event: 'video.failed' },
      { name: 'GPU pool: cancelled upstream', model: 'gateway/pool', prompt: 'stop [cancel]', status: 'cancelled', event: 'video.cancelled' },
      { name: 'GPU pool: a rejected result', model: 'gateway/pool', prompt: 'bad [rejected]', status: 'failed', event: 'video.failed' },
      { name: 'a stuck operation, given up at the timeout', model: 'gateway/veo', prompt: 'forever [stuck]', status: 'failed', event: 'video.failed' },
    ];
    for (const { name, model, prompt, status, event } of refundCases) {
      test(`${name}: the job ends ${status} and the hold is refunded exactly`, async () => {
        const before = await ledger(gateway);
        const submitted = await submitVideo(gateway, { model, prompt });
        assert.equal(submitted.status, 200, submitted.text);
        assert.ok((await ledger(gateway)).balance.reserved > before.balance.reserved, 'held while it runs');
        const job = (await endedVideo(gateway, submitted.body.id, diagnosis(submitted.body.id))).body;
        assert.equal(job.status, status, JSON.stringify(job));
        assert.deepEqual(job.data, []);
        if (status === 'failed') {
          assert.equal(typeof job.error.message, 'string');
          assert.ok(job.error.message.length > 0);
          // The upstream's own end is final: only a stuck operation waits for the timeout.
          if (prompt.includes('[stuck]')) assert.equal(job.error.code, 'upstream_timeout');
          else assert.notEqual(job.error.code, 'upstream_timeout');
        } else {
          assert.equal(job.error, null);
        }
        await refunded(before);
        assert.equal((await announced(job.id)).type, event);
      });
    }

    test('GPU pool: the options reach the queue, the file comes from its file host, and the delivered seconds are charged', async () => {
      const before = await ledger(gateway);
      const startedBefore = pool.started.length;
      const submitted = await submitVideo(gateway, {
        model: 'gateway/pool',
        prompt: 'a red kite',
        extra_body: { gpu_pool: { seed: 9, fps: 8, num_frames: 48, size: '640x360' } },
      });
      assert.equal(submitted.status, 200, submitted.text);
      assert.equal(submitted.body.durationSeconds, 6);
      const job = (await endedVideo(gateway, submitted.body.id, diagnosis(submitted.body.id))).body;
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(pool.started.length, startedBefore + 1);
      const sent = pool.started.at(-1)!.body;
      assert.deepEqual(
        { seed: sent.seed, fps: sent.fps, num_frames: sent.num_frames, width: sent.width, height: sent.height, duration: sent.duration },
        { seed: 9, fps: 8, num_frames: 48, width: 640, height: 360, duration: 6 },
      );
      assert.equal(pool.cdn.requests.at(-1)?.headers.authorization, undefined, 'the key never goes to the file host');
      const file = await download(job.data[0].url);
      assert.ok(Buffer.from(file.bytes).equals(videoBytes('a red kite', 6)));
      await chargedOnce(gateway, before, '0.3');
    });

    test('a start the upstream refuses fails the job at once, refunded, without a second attempt', async () => {
      const before = await ledger(gateway);
      const startedBefore = veo.started.length;
      veo.enqueue({ kind: 'status', status: 400, message: 'Unsupported prompt.' });
      const submitted = await submitVideo(gateway, { model: 'gateway/veo', prompt: 'refused', duration: 4 });
      const job = (await endedVideo(gateway, submitted.body.id, diagnosis(submitted.body.id))).body;
      assert.equal(job.status, 'failed');
      assert.match(job.error.message, /Unsupported prompt/);
      assert.equal(veo.started.length, startedBefore);
      await refunded(before);
    });
  });
}
