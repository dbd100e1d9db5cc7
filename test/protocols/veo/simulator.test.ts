/**
 * Veo over real HTTP against the simulator: start once, look until done, download the file;
 * transient faults on a look are thrown as retryable, so the job looks again, and an upstream
 * restart loses no operation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { veoProtocol } from '../../../src/protocols/veo/index.ts';
import { callContext, simulatorEndpoint } from '../../simulators/endpoint.ts';
import { startVeoSimulator, type VeoSimulator } from '../../simulators/veo.ts';
import { videoBytes } from '../../simulators/video-bytes.ts';
import { failedError, gatewayError, pollToEnd, succeededVideo, videoCall, videoContent } from '../video-helpers.ts';

describe('veo protocol ⇄ simulator', () => {
  let sim: VeoSimulator;
  let endpoint: ReturnType<typeof simulatorEndpoint>;
  const context = callContext({ apiKey: 'g-key' });
  before(async () => {
    sim = await startVeoSimulator({ apiKey: 'g-key' });
    endpoint = simulatorEndpoint({ kind: 'gemini', base_url: sim.baseUrl, timeout_ms: 10_000 }, 'models/veo-3.0-generate-001');
  });
  after(() => sim.close());

  test('start → running twice → succeeded; the file streams from its URI with the key', async () => {
    const operation = await veoProtocol.start(videoCall('A fox in the snow', 6), endpoint, context);
    assert.equal(operation.id, sim.started.at(-1)!.id);
    const start = sim.requests.at(-1)!;
    assert.equal(start.path, '/v1beta/models/veo-3.0-generate-001:predictLongRunning');
    assert.equal(start.headers['x-goog-api-key'], 'g-key');
    assert.deepEqual(start.body, { instances: [{ prompt: 'A fox in the snow' }], parameters: { durationSeconds: 6, sampleCount: 1 } });

    assert.deepEqual(await veoProtocol.poll(operation, endpoint, context), { status: 'running' });
    assert.deepEqual(await veoProtocol.poll(operation, endpoint, context), { status: 'running' });
    const video = succeededVideo(await veoProtocol.poll(operation, endpoint, context));
    assert.equal(sim.requests.at(-1)!.path, `/v1beta/${operation.id}`);
    assert.equal(video.contentType, 'video/mp4');
    assert.equal(video.durationSeconds, undefined);

    const content = await video.fetch();
    assert.ok(!(content instanceof Uint8Array), 'a download is streamed, not buffered');
    assert.deepEqual(await videoContent(video), videoBytes('A fox in the snow', 6));
    assert.match(sim.requests.at(-1)!.path, /^\/v1beta\/files\/[^/]+:download\?alt=media$/);
    assert.equal(sim.requests.at(-1)!.headers['x-goog-api-key'], 'g-key');
  });

  test('a video sent inline is decoded, not downloaded', async () => {
    const state = await pollToEnd(veoProtocol, await veoProtocol.start(videoCall('A fox [inline]', 4), endpoint, context), endpoint, context);
    const video = succeededVideo(state);
    const before = sim.requests.length;
    assert.deepEqual(await videoContent(video), videoBytes('A fox [inline]', 4));
    assert.equal(sim.requests.length, before);
  });

  test('transient faults on a look are thrown as retryable; the operation goes on, started once', async () => {
    const started = sim.started.length;
    const operation = await veoProtocol.start(videoCall('A heron', 4), endpoint, context);
    sim.enqueue(
      { kind: 'status', status: 503 },
      { kind: 'status', status: 429, headers: { 'retry-after': '3' } },
      { kind: 'status', status: 500 },
      { kind: 'reset', afterEvents: 0 },
      { kind: 'delay', ms: 2_000 },
    );
    const impatient = { ...endpoint, timeouts: { ...endpoint.timeouts, firstByteMs: 100 } };
    await assert.rejects(veoProtocol.poll(operation, endpoint, context), gatewayError('upstream_unavailable', true));
    await assert.rejects(
      veoProtocol.poll(operation, endpoint, context),
      (error) => gatewayError('upstream_rate_limited', true)(error) && (error as { retryAfterSeconds?: number }).retryAfterSeconds === 3,
    );
    await assert.rejects(veoProtocol.poll(operation, endpoint, context), gatewayError('upstream_error', true));
    await assert.rejects(veoProtocol.poll(operation, endpoint, context), gatewayError('upstream_unavailable', true));
    await assert.rejects(veoProtocol.poll(operation, impatient, context), gatewayError('upstream_timeout', true));
    succeededVideo(await pollToEnd(veoProtocol, operation, endpoint, context));
    assert.equal(sim.started.length, started + 1);
  });

  test('a malformed or cut body on a look is a clear retryable error, not a crash', async () => {
    const operation = await veoProtocol.start(videoCall('A crane', 4), endpoint, context);
    sim.enqueue({ kind: 'malformed', afterEvents: 0 }, { kind: 'truncate', afterEvents: 0 });
    await assert.rejects(veoProtocol.poll(operation, endpoint, context), gatewayError('upstream_error', true, /not valid JSON/));
    await assert.rejects(veoProtocol.poll(operation, endpoint, context), gatewayError('upstream_error', true, /not valid JSON/));
    succeededVideo(await pollToEnd(veoProtocol, operation, endpoint, context));
  });

  test('an upstream restart: refused connections, then 503 while it warms up, all retryable; the operation survives', async () => {
    const operation = await veoProtocol.start(videoCall('A lynx', 4), endpoint, context);
    assert.deepEqual(await veoProtocol.poll(operation, endpoint, context), { status: 'running' });
    await sim.goOffline();
    await assert.rejects(veoProtocol.poll(operation, endpoint, context), gatewayError('upstream_unavailable', true));
    await sim.goOnline();
    await sim.restart(2);
    await assert.rejects(veoProtocol.poll(operation, endpoint, context), gatewayError('upstream_unavailable', true));
    await assert.rejects(veoProtocol.poll(operation, endpoint, context), gatewayError('upstream_unavailable', true));
    assert.deepEqual(await veoProtocol.poll(operation, endpoint, context), { status: 'running' });
    const video = succeededVideo(await veoProtocol.poll(operation, endpoint, context));
    assert.deepEqual(await videoContent(video), videoBytes('A lynx', 4));
  });

  test('scripted outcomes: failed, cancelled upstream, filtered, stuck', async () => {
    const run = async (prompt: string) => pollToEnd(veoProtocol, await veoProtocol.start(videoCall(prompt), endpoint, context), endpoint, context);
    assert.match(failedError(await run('A wolf [fail]')).message, /Video generation failed/);
    assert.deepEqual(await run('A wolf [cancel]'), { status: 'cancelled' });
    assert.ok(gatewayError('upstream_error', false, /content filter/)(failedError(await run('A wolf [filtered]'))));
    await assert.rejects(run('A wolf [stuck]'), /still running after 10 looks/);
  });

  test('a start the upstream refuses is an ordinary upstream error; a bad key is the operator’s', async () => {
    const started = sim.started.length;
    sim.enqueue({ kind: 'status', status: 503 });
    await assert.rejects(veoProtocol.start(videoCall('A bear'), endpoint, context), gatewayError('upstream_unavailable', true));
    await assert.rejects(
      veoProtocol.start(videoCall('A bear'), endpoint, callContext({ apiKey: 'wrong' })),
      gatewayError('upstream_error', false, /credentials/),
    );
    sim.enqueue({ kind: 'malformed', afterEvents: 0 });
    await assert.rejects(veoProtocol.start(videoCall('A bear'), endpoint, context), gatewayError('upstream_error', true, /not valid JSON/));
    assert.equal(sim.started.length, started + 1, 'only the malformed answer had started one');
  });

  test('a failed download is thrown from fetch(), retryable', async () => {
    const video = succeededVideo(await pollToEnd(veoProtocol, await veoProtocol.start(videoCall('An owl'), endpoint, context), endpoint, context));
    sim.enqueue({ kind: 'status', status: 500 }, { kind: 'reset', afterEvents: 0 });
    await assert.rejects(video.fetch(), gatewayError('upstream_error', true));
    await assert.rejects(video.fetch(), gatewayError('upstream_unavailable', true));
    assert.deepEqual(await videoContent(video), videoBytes('An owl', 4));
  });
});
