/**
 * The runnable examples (examples/*.mjs) against a real gateway on the demo catalog: each runs as a
 * child process with the project's Node and installed SDKs, given the key and base URL in its
 * environment as a reader would, and must print its answer and exit 0.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decode } from 'fast-png';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { runProcess } from '../helpers/processes.ts';
import { HAVE_FFPROBE, probeVideo } from '../videos/helpers.ts';

describe('examples', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway();
  });
  after(() => gateway.close());

  const example = (name: string, env: Record<string, string> = { GATEWAY_API_KEY: gateway.apiKey }) =>
    runProcess([`examples/${name}`], { GATEWAY_BASE_URL: gateway.baseUrl, ...env });

  test('chat.mjs prints the reply and its token counts', async () => {
    const result = await example('chat.mjs');
    assert.equal(result.code, 0, result.stderr);
    const [reply, counts] = result.stdout.trimEnd().split('\n').slice(-2);
    assert.ok(reply.trim().length > 0, result.stdout);
    assert.match(counts, /^\(\d+ prompt \+ [1-9]\d* completion tokens\)$/);
    assert.equal(result.stderr, '');
  });

  test('streaming.mjs prints the streamed text, then the usage of the last chunk', async () => {
    const result = await example('streaming.mjs');
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trimEnd().split('\n');
    assert.ok(lines.slice(0, -1).join('\n').trim().length > 0, result.stdout);
    assert.match(lines.at(-1) ?? '', /^\(\d+ prompt \+ [1-9]\d* completion tokens\)$/);
    assert.equal(result.stderr, '');
  });

  test('messages.mjs prints the reply with its token counts, then the free count', async () => {
    const result = await example('messages.mjs');
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trimEnd().split('\n');
    assert.ok(lines.slice(0, -2).join('\n').trim().length > 0, result.stdout);
    assert.match(lines.at(-2) ?? '', /^\(\d+ input \+ [1-9]\d* output tokens\)$/);
    assert.match(lines.at(-1) ?? '', /^\(count_tokens: about [1-9]\d* input tokens, free\)$/);
    assert.equal(result.stderr, '');
  });

  test('responses.mjs prints the reply with its token counts, then the same response retrieved by id', async () => {
    const result = await example('responses.mjs');
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trimEnd().split('\n');
    assert.ok(lines.slice(0, -2).join('\n').trim().length > 0, result.stdout);
    assert.match(lines.at(-2) ?? '', /^\(\d+ input \+ [1-9]\d* output tokens\)$/);
    assert.match(lines.at(-1) ?? '', /^\(retrieved resp_[0-9a-z]{27}: completed\)$/);
    assert.equal(result.stderr, '');
  });

  test('images.mjs saves a generated PNG downloaded from its signed URL, then an edited one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gateway-example-images-'));
    try {
      const result = await runProcess(['examples/images.mjs', dir], { GATEWAY_BASE_URL: gateway.baseUrl, GATEWAY_API_KEY: gateway.apiKey });
      assert.equal(result.code, 0, result.stderr);
      const lines = result.stdout.trimEnd().split('\n');
      assert.match(lines.at(-2) ?? '', /^generated .*lighthouse\.png \([1-9]\d* bytes\)$/);
      assert.match(lines.at(-1) ?? '', /^edited .*lighthouse-moon\.png$/);
      for (const name of ['lighthouse.png', 'lighthouse-moon.png']) {
        const png = decode(await readFile(join(dir, name)));
        assert.deepEqual([png.width, png.height], [1024, 1024]);
      }
      assert.equal(result.stderr, '');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('video.mjs submits a job, polls it as told, and saves a playable MP4 of 4 s', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gateway-example-video-'));
    try {
      const result = await runProcess(['examples/video.mjs', dir], { GATEWAY_BASE_URL: gateway.baseUrl, GATEWAY_API_KEY: gateway.apiKey });
      assert.equal(result.code, 0, result.stderr);
      const lines = result.stdout.trimEnd().split('\n');
      assert.match(lines[0], /^\(submitted vid_[0-9a-z]{27}: processing, 4 s\)$/);
      assert.match(lines.at(-1) ?? '', /^saved .*boat\.mp4 \(4 s, [1-9]\d* bytes\)$/);
      const bytes = await readFile(join(dir, 'boat.mp4'));
      assert.deepEqual([...bytes.subarray(4, 8)].map((byte) => String.fromCharCode(byte)).join(''), 'ftyp', 'an MP4 file');
      if (HAVE_FFPROBE) assert.ok(Math.abs((await probeVideo(bytes)).durationSeconds - 4) < 0.05);
      assert.equal(result.stderr, '');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('background.mjs queues a response, polls it to its end, then cancels another', async () => {
    const result = await example('background.mjs');
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trimEnd().split('\n');
    assert.match(lines[0], /^\(queued resp_[0-9a-z]{27}: queued\)$/);
    assert.ok(lines.slice(1, -2).join('\n').trim().length > 0, result.stdout);
    assert.match(lines.at(-2) ?? '', /^\(completed, charged 0\.\d+ USD\)$/);
    assert.match(lines.at(-1) ?? '', /^\(cancelled resp_[0-9a-z]{27}: cancelled, charged 0 USD\)$/);
    assert.equal(result.stderr, '');
  });

  test('outputs.mjs prints the reply, its stored request, and the same completion read through the signed URL', async () => {
    const result = await example('outputs.mjs');
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trimEnd().split('\n');
    assert.ok(lines.slice(0, -2).join('\n').trim().length > 0, result.stdout);
    assert.match(lines.at(-2) ?? '', /^\(stored req_[0-9a-z]{27}: \/v1\/chat\/completions, completed, 0\.\d+ USD\)$/);
    assert.equal(lines.at(-1), '(output.json, application/json: the same completion as answered)');
    assert.equal(result.stderr, '');
  });

  test('embeddings.mjs ranks the documents by similarity to the question, the lighthouse first', async () => {
    const result = await example('embeddings.mjs');
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 4, result.stdout);
    assert.match(lines[0], /^0\.\d{3} {2}The lighthouse keeper/);
    const scores = lines.slice(0, 3).map((line) => Number(line.split(' ')[0]));
    assert.deepEqual(
      scores,
      [...scores].sort((a, b) => b - a),
    );
    assert.match(lines[3], /^\(\d+ tokens, 256 dimensions\)$/);
    assert.equal(result.stderr, '');
  });

  test('models.mjs lists the models with their prices', async () => {
    const result = await example('models.mjs');
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^gateway\/atlas-4-5\s+3 in \/ 15 out USD per 1M tokens$/m);
    assert.match(result.stdout, /^gateway\/atlas-embed-1\s+0\.02 in USD per 1M tokens$/m);
    assert.match(result.stdout, /^gateway\/prism-image-2\s+per_image$/m);
  });

  test('a wrong key or none: a one-line explanation and exit code 1', async () => {
    const wrong = await example('models.mjs', { GATEWAY_API_KEY: 'gateway_wrong' });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /^401 invalid_api_key: /);
    for (const name of ['chat.mjs', 'streaming.mjs', 'messages.mjs', 'responses.mjs', 'background.mjs', 'embeddings.mjs', 'models.mjs']) {
      const missing = await example(name, {});
      assert.equal(missing.code, 1, name);
      assert.match(missing.stderr, /^Set GATEWAY_API_KEY/, name);
    }
  });
});
