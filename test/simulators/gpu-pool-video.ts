/**
 * A GPU pool's video queue in fal's shape: `POST /{owner}/{model}[/subpath]` with
 * `Authorization: Key …` queues a generation and answers its status, result and cancel URLs (under
 * `/{owner}/{model}/requests/{id}`, without the subpath, as fal does); the status goes IN_QUEUE →
 * IN_PROGRESS for the first `runningPolls` looks (default 2), then COMPLETED; the result links to
 * the file on a separate file host (`cdn`, another origin, which must never see the key). Markers
 * in the prompt script the outcome: `[fail]` (COMPLETED with an `error`), `[cancel]` (CANCELLED),
 * `[stuck]` (never done), `[rejected]` (the result answers 422 with validation `detail`).
 * @see https://docs.fal.ai/model-endpoints/queue
 */
import { startSimulator, type RecordedRequest, type Reply, type Simulator } from './harness.ts';
import { videoBytes } from './video-bytes.ts';
import type { StartedVideo, VideoSimulatorOptions } from './veo.ts';

export interface GpuPoolVideoSimulator extends Simulator {
  readonly baseUrl: string;
  /** The file host the results link to. */
  readonly cdn: Simulator;
  /** Every generation queued, in order. */
  readonly started: StartedVideo[];
}

interface QueuedVideo extends StartedVideo {
  readonly seconds: number;
  looks: number;
}

const detailBody = (_status: number, message: string): object => ({ detail: message });

export async function startGpuPoolVideoSimulator({ apiKey, runningPolls = 2 }: VideoSimulatorOptions): Promise<GpuPoolVideoSimulator> {
  const queued = new Map<string, QueuedVideo>();
  const started: StartedVideo[] = [];
  const cdn = await startSimulator({
    handle: (request, reply) => {
      const video = queued.get(/^\/files\/([^/]+)\.mp4$/.exec(request.path)?.[1] ?? '');
      if (request.method !== 'GET' || !video) return reply.json(404, detailBody(404, 'Not found'));
      reply.bytes(200, videoBytes(video.prompt, video.seconds), 'video/mp4');
    },
    errorBody: detailBody,
    streamErrorEvent: (message) => ({ data: detailBody(500, message) }),
  });
  const simulator = await startSimulator({ handle, errorBody: detailBody, streamErrorEvent: (message) => ({ data: detailBody(500, message) }) });

  function handle(request: RecordedRequest, reply: Reply): void {
    if (request.headers.authorization !== `Key ${apiKey}`) return reply.json(401, detailBody(401, 'Invalid key'));
    const look = /^\/[^/]+\/[^/]+\/requests\/([^/]+)(\/status)?$/.exec(request.path);
    if (request.method === 'GET' && look) return look[2] ? status(look[1], reply) : result(look[1], reply);
    if (request.method === 'POST') return enqueue(request.path.slice(1), request, reply);
    reply.json(404, detailBody(404, `Unknown path ${request.path}`));
  }

  function enqueue(model: string, request: RecordedRequest, reply: Reply): void {
    const { prompt, duration } = request.body ?? {};
    if (typeof prompt !== 'string' || typeof duration !== 'number' || duration <= 0) {
      return reply.json(422, { detail: [{ loc: ['body', 'prompt'], msg: 'prompt and duration are required', type: 'value_error' }] });
    }
    const id = `req-${queued.size + 1}`;
    queued.set(id, { id, model, prompt, body: request.body, seconds: duration, looks: 0 });
    started.push({ id, model, prompt, body: request.body });
    const base = `${simulator.origin}/${model.split('/').slice(0, 2).join('/')}/requests/${id}`;
    reply.json(200, { request_id: id, response_url: base, status_url: `${base}/status`, cancel_url: `${base}/cancel`, queue_position: 0 });
  }

  function status(id: string, reply: Reply): void {
    const video = queued.get(id);
    if (!video) return reply.json(404, detailBody(404, 'Request not found'));
    video.looks++;
    if (!done(video)) return reply.json(202, { status: video.looks === 1 ? 'IN_QUEUE' : 'IN_PROGRESS', queue_position: 0 });
    if (video.prompt.includes('[cancel]')) return reply.json(200, { status: 'CANCELLED' });
    if (video.prompt.includes('[fail]')) return reply.json(200, { status: 'COMPLETED', error: 'Simulated generation failure', error_type: 'runner_error' });
    reply.json(200, { status: 'COMPLETED' });
  }

  function result(id: string, reply: Reply): void {
    const video = queued.get(id);
    if (!video) return reply.json(404, detailBody(404, 'Request not found'));
    if (!done(video)) return reply.json(400, detailBody(400, 'Request is still in progress'));
    if (video.prompt.includes('[rejected]')) {
      return reply.json(422, { detail: [{ loc: ['body', 'prompt'], msg: 'Simulated rejection of the input', type: 'value_error' }] });
    }
    const file = videoBytes(video.prompt, video.seconds);
    reply.json(200, { video: { url: `${cdn.origin}/files/${id}.mp4`, content_type: 'video/mp4', file_size: file.length }, seed: 42, duration: video.seconds });
  }

  function done(video: QueuedVideo): boolean {
    return !video.prompt.includes('[stuck]') && video.looks > runningPolls;
  }

  const closeQueue = simulator.close;
  return Object.assign(simulator, {
    baseUrl: simulator.origin,
    cdn,
    started,
    close: async () => {
      await cdn.close();
      await closeQueue();
    },
  });
}
