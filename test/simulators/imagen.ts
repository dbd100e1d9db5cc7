/**
 * A Google Imagen upstream: `POST /v1beta/models/{model}:predict` with `x-goog-api-key`, answering
 * PNG predictions (and, for a prompt containing `[filtered]`, one prediction withheld with a
 * `raiFilteredReason` instead of bytes), with the harness's fault injection and Google's error body.
 * @see https://ai.google.dev/gemini-api/docs/imagen
 */
import { startSimulator, type RecordedRequest, type Reply, type Simulator } from './harness.ts';
import { seededPng } from './openai-images.ts';

export interface ImagenSimulator extends Simulator {
  /** The provider `base_url` (the API origin, without a version). */
  readonly baseUrl: string;
}

export function googleErrorBody(status: number, message: string): object {
  const statuses: Record<number, string> = { 400: 'INVALID_ARGUMENT', 403: 'PERMISSION_DENIED', 429: 'RESOURCE_EXHAUSTED', 503: 'UNAVAILABLE' };
  return { error: { code: status, message, status: statuses[status] ?? 'INTERNAL' } };
}

export async function startImagenSimulator(apiKey: string): Promise<ImagenSimulator> {
  const simulator = await startSimulator({
    handle: (request, reply) => handle(request, reply, apiKey),
    errorBody: googleErrorBody,
    streamErrorEvent: (message) => ({ data: googleErrorBody(500, message) }),
  });
  return Object.assign(simulator, { baseUrl: simulator.origin });
}

function handle(request: RecordedRequest, reply: Reply, apiKey: string): void {
  const match = /^\/v1beta\/models\/([^/:]+):predict$/.exec(request.path);
  if (request.method !== 'POST' || !match) return reply.json(404, googleErrorBody(404, `Unknown path ${request.path}`));
  if (request.headers['x-goog-api-key'] !== apiKey) return reply.json(403, googleErrorBody(403, 'API key not valid.'));
  const instance = request.body?.instances?.[0];
  const count = request.body?.parameters?.sampleCount ?? 1;
  if (typeof instance?.prompt !== 'string' || !Number.isInteger(count)) return reply.json(400, googleErrorBody(400, 'instances[0].prompt is required'));
  const [width, height] = (request.body.parameters.aspectRatio ?? '1:1').split(':').map((side: string) => Number(side) * 16);
  const predictions: object[] = [];
  for (let index = 0; index < count; index++) {
    if (index === 0 && instance.prompt.includes('[filtered]')) {
      predictions.push({ raiFilteredReason: 'Filtered by the simulated safety filter.' });
      continue;
    }
    const png = seededPng(`${match[1]}\n${instance.prompt}\n${index}\n${instance.referenceImages?.length ?? 0}`, width, height);
    predictions.push({ bytesBase64Encoded: png.toString('base64'), mimeType: 'image/png' });
  }
  reply.json(200, { predictions });
}
