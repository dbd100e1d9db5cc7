/**
 * A Google Veo upstream: `POST /v1beta/models/{model}:predictLongRunning` with `x-goog-api-key`
 * starts an operation, `GET /v1beta/models/{model}/operations/{id}` looks at it, and a finished
 * one links to its file at `/v1beta/files/{id}:download?alt=media` (the key required there too).
 * Operations live in memory with a scripted life: each is running for its first `runningPolls`
 * looks (default 2) and done at the next, with the outcome a marker in the prompt asks for:
 * `[fail]` (an operation error), `[cancel]` (CANCELLED upstream), `[stuck]` (never done),
 * `[filtered]` (every sample withheld by the safety filter), `[inline]` (the file as base64 in
 * the operation); otherwise a video of the asked duration. The harness's faults apply to every
 * request, and a restart keeps every operation, as a real provider's would.
 * @see https://ai.google.dev/gemini-api/docs/video
 */
import { googleErrorBody } from './imagen.ts';
import { startSimulator, type RecordedRequest, type Reply, type Simulator } from './harness.ts';
import { videoBytes } from './video-bytes.ts';

export interface StartedVideo {
  /** The operation's name or request id, as the start answered it. */
  readonly id: string;
  readonly model: string;
  readonly prompt: string;
  /** The body of the start request. */
  readonly body: any;
}

export interface VeoSimulator extends Simulator {
  /** The provider `base_url` (the API origin, without a version). */
  readonly baseUrl: string;
  /** Every generation started, in order: a job must start exactly one. */
  readonly started: StartedVideo[];
}

export interface VideoSimulatorOptions {
  readonly apiKey: string;
  /** How many looks see an operation running before it is done. */
  readonly runningPolls?: number;
}

interface VeoOperation extends StartedVideo {
  readonly seconds: number;
  looks: number;
}

const RESPONSE_TYPE = 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse';

export async function startVeoSimulator({ apiKey, runningPolls = 2 }: VideoSimulatorOptions): Promise<VeoSimulator> {
  const operations = new Map<string, VeoOperation>();
  const started: StartedVideo[] = [];
  const simulator = await startSimulator({
    handle,
    errorBody: googleErrorBody,
    streamErrorEvent: (message) => ({ data: googleErrorBody(500, message) }),
  });

  function handle(request: RecordedRequest, reply: Reply): void {
    if (request.headers['x-goog-api-key'] !== apiKey) return reply.json(403, googleErrorBody(403, 'API key not valid.'));
    const start = /^\/v1beta\/models\/([^/:]+):predictLongRunning$/.exec(request.path);
    if (request.method === 'POST' && start) return startOperation(start[1], request, reply);
    const look = /^\/v1beta\/(models\/[^/]+\/operations\/[^/]+)$/.exec(request.path);
    if (request.method === 'GET' && look) return lookAt(look[1], reply);
    const file = /^\/v1beta\/files\/([^/:]+):download\?alt=media$/.exec(request.path);
    if (request.method === 'GET' && file) return download(file[1], reply);
    reply.json(404, googleErrorBody(404, `Unknown path ${request.path}`));
  }

  function startOperation(model: string, request: RecordedRequest, reply: Reply): void {
    const prompt = request.body?.instances?.[0]?.prompt;
    const seconds = request.body?.parameters?.durationSeconds;
    if (typeof prompt !== 'string' || !Number.isInteger(seconds) || seconds < 1) {
      return reply.json(400, googleErrorBody(400, 'instances[0].prompt and parameters.durationSeconds are required'));
    }
    const name = `models/${model}/operations/op${operations.size + 1}`;
    const operation: VeoOperation = { id: name, model, prompt, body: request.body, seconds, looks: 0 };
    operations.set(name, operation);
    started.push({ id: name, model, prompt, body: request.body });
    reply.json(200, { name });
  }

  function lookAt(name: string, reply: Reply): void {
    const operation = operations.get(name);
    if (!operation) return reply.json(404, googleErrorBody(404, `Operation ${name} not found`));
    operation.looks++;
    if (operation.prompt.includes('[stuck]') || operation.looks <= runningPolls) {
      // `[retry-after=N]` in the prompt: a running operation asks for N seconds before the next look.
      const wait = /\[retry-after=(\d+)\]/.exec(operation.prompt)?.[1];
      return reply.json(200, { name }, wait === undefined ? undefined : { 'retry-after': wait });
    }
    reply.json(200, { name, done: true, ...outcome(operation) });
  }

  function outcome(operation: VeoOperation): object {
    const { prompt } = operation;
    if (prompt.includes('[fail]')) return { error: { code: 13, message: 'Video generation failed.' } };
    if (prompt.includes('[cancel]')) return { error: { code: 1, message: 'The operation was cancelled.' } };
    if (prompt.includes('[filtered]')) {
      return {
        response: { '@type': RESPONSE_TYPE, generateVideoResponse: { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['Simulated safety filter.'] } },
      };
    }
    const video = prompt.includes('[inline]')
      ? { encodedVideo: videoBytes(prompt, operation.seconds).toString('base64'), encoding: 'video/mp4' }
      : { uri: `${simulator.origin}/v1beta/files/${fileId(operation)}:download?alt=media` };
    return { response: { '@type': RESPONSE_TYPE, generateVideoResponse: { generatedSamples: [{ video }] } } };
  }

  function download(id: string, reply: Reply): void {
    const operation = [...operations.values()].find((candidate) => fileId(candidate) === id);
    if (!operation) return reply.json(404, googleErrorBody(404, `File ${id} not found`));
    reply.bytes(200, videoBytes(operation.prompt, operation.seconds), 'video/mp4');
  }

  return Object.assign(simulator, { baseUrl: simulator.origin, started });
}

function fileId(operation: VeoOperation): string {
  return operation.id.slice(operation.id.lastIndexOf('/') + 1);
}
