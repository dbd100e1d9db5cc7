/**
 * The gpu-pool video queue: the model input (pure), the queue's answers (pure), and start → poll →
 * fetch over real HTTP against the simulator, whose results link to a file host of another origin.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { queueModelPath, queueVideoInput } from '../../../src/protocols/gpu-pool/video-request.ts';
import { parseQueueResult, parseQueueStatus, parseQueueSubmission } from '../../../src/protocols/gpu-pool/video-response.ts';
import { gpuPoolVideoProtocol } from '../../../src/protocols/gpu-pool/video.ts';
import { callContext, simulatorEndpoint } from '../../simulators/endpoint.ts';
import { startGpuPoolVideoSimulator, type GpuPoolVideoSimulator } from '../../simulators/gpu-pool-video.ts';
import { videoBytes } from '../../simulators/video-bytes.ts';
import { failedError, gatewayError, pollToEnd, succeededVideo, videoCall, videoContent } from '../video-helpers.ts';

describe('gpu-pool video: call → model input', () => {
  test('the prompt and the duration in seconds when nothing else was asked', () => {
    assert.deepEqual(queueVideoInput(videoCall('A fox', 5)), { prompt: 'A fox', duration: 5 });
  });

  test('the gpu_pool options by their input names; the size as width and height', () => {
    const options = { size: '1280x720', frames: { fps: 24, count: 121 }, numInferenceSteps: 30, seed: 9, negativePrompt: 'blur' };
    assert.deepEqual(queueVideoInput(videoCall('A fox', 5, { providerOptions: { group: 'gpu_pool', options } })), {
      prompt: 'A fox',
      duration: 5,
      negative_prompt: 'blur',
      seed: 9,
      num_inference_steps: 30,
      fps: 24,
      num_frames: 121,
      width: 1280,
      height: 720,
    });
  });

  test('the model path keeps its slashes and encodes each segment', () => {
    assert.equal(queueModelPath('fal-ai/wan/v2.2/text-to-video'), 'fal-ai/wan/v2.2/text-to-video');
    assert.equal(queueModelPath('owner/a model?'), 'owner/a%20model%3F');
  });
});

describe('gpu-pool video: queue answers', () => {
  const base = 'https://queue.example/fal-ai/wan/requests/r1';

  test('a submission becomes the operation: its id and the URLs to look at it by', () => {
    const body = { request_id: 'r1', status_url: `${base}/status`, response_url: base, cancel_url: `${base}/cancel`, queue_position: 3 };
    assert.deepEqual(parseQueueSubmission(body), { id: 'r1', status_url: `${base}/status`, response_url: base });
  });

  test('a submission without an id or its URLs is malformed', () => {
    for (const body of [{ status_url: `${base}/status`, response_url: base }, { request_id: 'r1', status_url: 'ftp://x', response_url: base }, null]) {
      assert.throws(() => parseQueueSubmission(body), gatewayError('upstream_error', true));
    }
  });

  test('statuses: queued and in progress run, COMPLETED is read, either cancelled spelling is cancelled', () => {
    assert.deepEqual(parseQueueStatus({ status: 'IN_QUEUE', queue_position: 2 }), { status: 'running' });
    assert.deepEqual(parseQueueStatus({ status: 'IN_PROGRESS', logs: [] }), { status: 'running' });
    assert.deepEqual(parseQueueStatus({ status: 'COMPLETED' }), { status: 'completed' });
    assert.deepEqual(parseQueueStatus({ status: 'CANCELLED' }), { status: 'cancelled' });
    assert.deepEqual(parseQueueStatus({ status: 'CANCELED' }), { status: 'cancelled' });
  });

  test('a status with an error is a failed run, not retryable', () => {
    const state = parseQueueStatus({ status: 'COMPLETED', error: 'CUDA out of memory', error_type: 'runner_error' });
    assert.ok(state.status === 'failed' && gatewayError('upstream_error', false, /CUDA out of memory/)(state.error));
    const typed = parseQueueStatus({ status: 'COMPLETED', error: { unexpected: true }, error_type: 'runner_error' });
    assert.ok(typed.status === 'failed' && /runner_error/.test(typed.error.message));
  });

  test('an unknown status is a retryable malformed answer', () => {
    assert.throws(() => parseQueueStatus({ status: 'PAUSED' }), gatewayError('upstream_error', true, /PAUSED/));
  });

  test('a result links to its file, with its type and duration when given', () => {
    assert.deepEqual(parseQueueResult({ video: { url: 'https://cdn.example/v.mp4', content_type: 'video/mp4', file_size: 10 }, seed: 1, duration: 5.04 }), {
      status: 'succeeded',
      file: { url: 'https://cdn.example/v.mp4', contentType: 'video/mp4', durationSeconds: 5.04 },
    });
    assert.deepEqual(parseQueueResult({ video: { url: 'https://cdn.example/v.webm' } }), {
      status: 'succeeded',
      file: { url: 'https://cdn.example/v.webm', contentType: 'video/mp4' },
    });
  });

  test('wrong-typed fields are a retryable malformed answer: the seconds charged are never a string, zero or negative', () => {
    const url = 'https://cdn.example/v.mp4';
    for (const body of [
      { video: { url }, duration: '5' },
      { video: { url }, duration: 0 },
      { video: { url }, duration: -3 },
      { video: { url: 42 } },
      { video: 'v.mp4' },
    ]) {
      assert.throws(() => parseQueueResult(body), gatewayError('upstream_error', true, /does not match its documented shape/), JSON.stringify(body));
    }
    for (const body of [{ status: 7 }, { status: 'IN_QUEUE', error_type: 3 }, []]) {
      assert.throws(() => parseQueueStatus(body), gatewayError('upstream_error', true, /does not match its documented shape/), JSON.stringify(body));
    }
    for (const body of [
      { request_id: 1, status_url: `${base}/status`, response_url: base },
      { request_id: 'r1', status_url: ['x'], response_url: base },
    ]) {
      assert.throws(() => parseQueueSubmission(body), gatewayError('upstream_error', true, /does not match its documented shape/), JSON.stringify(body));
    }
  });

  test('a result with `detail`, without a video, or with an unusable URL is failed', () => {
    const detail = parseQueueResult({ detail: [{ loc: ['body', 'prompt'], msg: 'too long', type: 'value_error' }] });
    assert.ok(detail.status === 'failed' && gatewayError('upstream_error', false, /too long/)(detail.error));
    assert.equal(parseQueueResult({ images: [] }).status, 'failed');
    assert.equal(parseQueueResult({ video: { url: 'file:///etc/passwd' } }).status, 'failed');
    // The file is served back with its type: a "video" that would be a page of the upstream's making is refused.
    const page = parseQueueResult({ video: { url: 'https://cdn.example/v.mp4', content_type: 'text/html' } });
    assert.ok(page.status === 'failed' && /content type/.test(page.error.message));
    assert.ok(parseQueueResult({ video: { url: 'https://cdn.example/v.webm', content_type: 'Video/WebM' } }).status === 'succeeded');
  });
});

describe('gpu-pool video protocol ⇄ simulator', () => {
  let sim: GpuPoolVideoSimulator;
  let endpoint: ReturnType<typeof simulatorEndpoint>;
  const context = callContext({ apiKey: 'pool-key' });
  before(async () => {
    sim = await startGpuPoolVideoSimulator({ apiKey: 'pool-key' });
    endpoint = simulatorEndpoint({ kind: 'gpu-pool', base_url: `${sim.baseUrl}/`, timeout_ms: 10_000 }, 'fal-ai/wan/v2.2/text-to-video');
  });
  after(() => sim.close());

  test('start → queued, in progress → completed; the result read, the file streamed from the file host without the key', async () => {
    const operation = await gpuPoolVideoProtocol.start(
      videoCall('A fox', 5, { providerOptions: { group: 'gpu_pool', options: { seed: 3 } } }),
      endpoint,
      context,
    );
    const start = sim.requests.at(-1)!;
    assert.equal(start.path, '/fal-ai/wan/v2.2/text-to-video');
    assert.equal(start.headers.authorization, 'Key pool-key');
    assert.deepEqual(start.body, { prompt: 'A fox', duration: 5, seed: 3 });
    assert.equal(operation.id, sim.started.at(-1)!.id);
    assert.equal(operation.status_url, `${sim.origin}/fal-ai/wan/requests/${operation.id}/status`);

    assert.deepEqual(await gpuPoolVideoProtocol.poll(operation, endpoint, context), { status: 'running' });
    assert.deepEqual(await gpuPoolVideoProtocol.poll(operation, endpoint, context), { status: 'running' });
    const video = succeededVideo(await gpuPoolVideoProtocol.poll(operation, endpoint, context));
    assert.deepEqual(
      sim.requests.slice(-2).map((request) => [request.path, request.headers.authorization]),
      [
        [`/fal-ai/wan/requests/${operation.id}/status`, 'Key pool-key'],
        [`/fal-ai/wan/requests/${operation.id}`, 'Key pool-key'],
      ],
    );
    assert.equal(video.contentType, 'video/mp4');
    assert.equal(video.durationSeconds, 5);
    assert.ok(!((await video.fetch()) instanceof Uint8Array), 'a download is streamed, not buffered');
    assert.deepEqual(await videoContent(video), videoBytes('A fox', 5));
    assert.equal(sim.cdn.requests.at(-1)!.path, `/files/${operation.id}.mp4`);
    assert.equal(sim.cdn.requests.at(-1)!.headers.authorization, undefined, 'the key never goes to another origin');
  });

  test('transient faults on the status or the result are thrown as retryable; one generation started', async () => {
    const started = sim.started.length;
    const operation = await gpuPoolVideoProtocol.start(videoCall('A heron'), endpoint, context);
    sim.enqueue({ kind: 'status', status: 502 }, { kind: 'status', status: 429 }, { kind: 'reset', afterEvents: 0 }, { kind: 'malformed', afterEvents: 0 });
    await assert.rejects(gpuPoolVideoProtocol.poll(operation, endpoint, context), gatewayError('upstream_error', true));
    await assert.rejects(gpuPoolVideoProtocol.poll(operation, endpoint, context), gatewayError('upstream_rate_limited', true));
    await assert.rejects(gpuPoolVideoProtocol.poll(operation, endpoint, context), gatewayError('upstream_unavailable', true));
    await assert.rejects(gpuPoolVideoProtocol.poll(operation, endpoint, context), gatewayError('upstream_error', true, /not valid JSON/));
    // The queue saw the last two looks (their answers were broken on the way), so the next says
    // COMPLETED; the result read after it fails once, and the next look reads it.
    sim.enqueue({ kind: 'normal' }, { kind: 'status', status: 503 });
    await assert.rejects(gpuPoolVideoProtocol.poll(operation, endpoint, context), gatewayError('upstream_unavailable', true));
    succeededVideo(await gpuPoolVideoProtocol.poll(operation, endpoint, context));
    assert.equal(sim.started.length, started + 1);
  });

  test('an upstream restart loses no queued request', async () => {
    const operation = await gpuPoolVideoProtocol.start(videoCall('A lynx', 3), endpoint, context);
    await sim.goOffline();
    await assert.rejects(gpuPoolVideoProtocol.poll(operation, endpoint, context), gatewayError('upstream_unavailable', true));
    await sim.goOnline();
    await sim.restart(1);
    await assert.rejects(gpuPoolVideoProtocol.poll(operation, endpoint, context), gatewayError('upstream_unavailable', true));
    const video = succeededVideo(await pollToEnd(gpuPoolVideoProtocol, operation, endpoint, context));
    assert.deepEqual(await videoContent(video), videoBytes('A lynx', 3));
  });

  test('scripted outcomes: failed run, cancelled upstream, input rejected at the result, stuck', async () => {
    const run = async (prompt: string) =>
      pollToEnd(gpuPoolVideoProtocol, await gpuPoolVideoProtocol.start(videoCall(prompt), endpoint, context), endpoint, context);
    assert.ok(gatewayError('upstream_error', false, /Simulated generation failure/)(failedError(await run('A wolf [fail]'))));
    assert.deepEqual(await run('A wolf [cancel]'), { status: 'cancelled' });
    const rejected = failedError(await run('A wolf [rejected]'));
    assert.ok(gatewayError('upstream_error', false, /Simulated rejection of the input/)(rejected));
    assert.equal(rejected.status, 400);
    await assert.rejects(run('A wolf [stuck]'), /still running after 10 looks/);
  });

  test('a start the queue refuses is an ordinary upstream error; a bad key is the operator’s', async () => {
    sim.enqueue({ kind: 'status', status: 503 });
    await assert.rejects(gpuPoolVideoProtocol.start(videoCall('A bear'), endpoint, context), gatewayError('upstream_unavailable', true));
    await assert.rejects(
      gpuPoolVideoProtocol.start(videoCall('A bear'), endpoint, callContext({ apiKey: 'wrong' })),
      gatewayError('upstream_error', false, /credentials/),
    );
    await assert.rejects(
      gpuPoolVideoProtocol.start(videoCall('A bear', 0), endpoint, context),
      gatewayError('upstream_error', false, /prompt and duration are required/),
    );
  });

  test('a failed download from the file host is thrown from fetch(), retryable', async () => {
    const video = succeededVideo(
      await pollToEnd(gpuPoolVideoProtocol, await gpuPoolVideoProtocol.start(videoCall('An owl'), endpoint, context), endpoint, context),
    );
    sim.cdn.enqueue({ kind: 'status', status: 500 });
    await assert.rejects(video.fetch(), gatewayError('upstream_error', true));
    assert.deepEqual(await videoContent(video), videoBytes('An owl', 4));
  });
});
