/**
 * Shared pieces of the video tests: video models, the two calls of the API, waiting for a job to
 * end, and checking a downloaded file with ffprobe (Debian's ffmpeg package, which CI installs).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { EndpointConfig, ModelConfig } from '../../src/config/schema.ts';
import { call, type JsonResponse } from '../helpers/http.ts';
import { untilEnded, VIDEO_RUNNING } from '../helpers/jobs.ts';

export const FFPROBE = '/usr/bin/ffprobe';
export const HAVE_FFPROBE = existsSync(FFPROBE);
/** The `skip` of a test that reads files with ffprobe: it says why when ffprobe is missing. */
export const FFPROBE_SKIP = HAVE_FFPROBE ? false : 'ffprobe (Debian package ffmpeg) is not installed';

export function videoEndpoint(model: string, overrides: Partial<EndpointConfig> = {}): EndpointConfig {
  return {
    provider: 'sim',
    model,
    supply: 'first_party',
    training_use: 'never',
    pricing: { unit: 'per_second', per_second: 0.1 },
    capabilities: { video_generation: true },
    ...overrides,
  };
}

export function videoModel(id: string, endpoints: EndpointConfig[], overrides: Partial<ModelConfig> = {}): ModelConfig {
  return {
    id,
    name: id,
    owned_by: 'tests',
    category: 'VIDEO',
    type: 'video',
    input_modalities: ['text'],
    output_modalities: ['video'],
    endpoints,
    ...overrides,
  };
}

/** Where a test's gateway is and whose key calls it. */
export interface VideoClient {
  readonly baseUrl: string;
  readonly apiKey: string;
}

export const submitVideo = (client: VideoClient, body: unknown, headers: Record<string, string> = {}, key = client.apiKey) =>
  call(client.baseUrl, 'POST', '/v1/videos/generations', { key, json: body, headers });

export const getVideo = (client: VideoClient, id: string, key = client.apiKey) => call(client.baseUrl, 'GET', `/v1/videos/generations/${id}`, { key });

/** Polls the job (as a client would, only faster) until it is no longer processing; returns its last poll. */
export async function endedVideo(client: VideoClient, id: string, explain?: () => Promise<string>): Promise<JsonResponse> {
  const read = async () => {
    const polled = await getVideo(client, id);
    assert.equal(polled.status, 200, polled.text);
    if (polled.body.status === 'processing') assert.equal(polled.headers.get('retry-after'), '5', 'a processing job tells the client when to look again');
    return { status: polled.body.status as unknown, polled };
  };
  return (await untilEnded(read, VIDEO_RUNNING, `video job ${id}`, { timeoutMs: 30_000, explain })).polled;
}

export interface ProbedVideo {
  readonly codec: string;
  readonly profile: string;
  readonly width: number;
  readonly height: number;
  readonly durationSeconds: number;
}

/** What ffprobe reads of the file; fails the test when it cannot read it as a video. */
export async function probeVideo(bytes: Uint8Array): Promise<ProbedVideo> {
  const folder = await mkdtemp(join(tmpdir(), 'gateway-video-'));
  try {
    const path = join(folder, 'video.mp4');
    await writeFile(path, bytes);
    const { stdout } = await promisify(execFile)(FFPROBE, ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', path]);
    const probed = JSON.parse(stdout) as { streams: Record<string, unknown>[]; format: Record<string, unknown> };
    const video = probed.streams.find((stream) => stream.codec_type === 'video');
    assert.ok(video, 'the file has a video stream');
    return {
      codec: String(video.codec_name),
      profile: String(video.profile),
      width: Number(video.width),
      height: Number(video.height),
      durationSeconds: Number(probed.format.duration),
    };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** Downloads a signed file URL (no API key: the signature is the credential). */
export async function download(url: string): Promise<{ status: number; contentType: string | null; bytes: Uint8Array }> {
  const response = await fetch(url);
  return { status: response.status, contentType: response.headers.get('content-type'), bytes: new Uint8Array(await response.arrayBuffer()) };
}
