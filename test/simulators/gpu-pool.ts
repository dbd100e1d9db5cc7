/**
 * A diffusion GPU pool upstream with Together's OpenAI-like images path: `POST
 * /v1/images/generations` with width, height, steps, guidance_scale, seed, negative_prompt and an
 * optional `image_url` (a data URL for image-to-image), answering `b64_json` when `response_format`
 * is `base64`, else URLs it serves itself.
 * @see https://docs.together.ai/reference/post-images-generations
 */
import { chatErrorBody } from './openai-chat.ts';
import { startSimulator, type RecordedRequest, type Reply, type Simulator } from './harness.ts';
import { seededPng } from './openai-images.ts';

export interface GpuPoolSimulator extends Simulator {
  readonly baseUrl: string;
}

export async function startGpuPoolSimulator(apiKey: string): Promise<GpuPoolSimulator> {
  const files = new Map<string, Buffer>();
  const simulator = await startSimulator({
    handle: (request, reply) => handle(request, reply),
    errorBody: chatErrorBody,
    streamErrorEvent: (message) => ({ data: chatErrorBody(500, message) }),
  });

  function handle(request: RecordedRequest, reply: Reply): void {
    if (request.method === 'GET' && files.has(request.path)) return reply.bytes(200, files.get(request.path)!, 'image/png');
    if (request.method !== 'POST' || request.path !== '/v1/images/generations') return reply.json(404, chatErrorBody(404, `Unknown path ${request.path}`));
    if (request.headers.authorization !== `Bearer ${apiKey}`) return reply.json(401, chatErrorBody(401, 'Invalid API key'));
    const body = request.body ?? {};
    if (typeof body.model !== 'string' || typeof body.prompt !== 'string') return reply.json(400, chatErrorBody(400, 'model and prompt are required'));
    if (body.response_format !== undefined && body.response_format !== 'base64' && body.response_format !== 'url') {
      return reply.json(400, chatErrorBody(400, 'response_format must be url or base64'));
    }
    if (body.image_url !== undefined && !String(body.image_url).startsWith('data:image/'))
      return reply.json(400, chatErrorBody(400, 'image_url must be a data URL here'));
    const width = body.width ?? 1024;
    const height = body.height ?? 1024;
    const data = [];
    for (let index = 0; index < (body.n ?? 1); index++) {
      const png = seededPng(`${body.model}\n${body.prompt}\n${body.seed ?? ''}\n${body.steps ?? ''}\n${index}\n${body.image_url?.length ?? 0}`, width, height);
      if (body.response_format === 'base64') {
        data.push({ index, type: 'b64_json', b64_json: png.toString('base64') });
      } else {
        const path = `/files/${simulator.requests.length}-${index}.png`;
        files.set(path, png);
        data.push({ index, type: 'url', url: `${simulator.origin}${path}` });
      }
    }
    reply.json(200, { id: `gen-${simulator.requests.length}`, model: body.model, object: 'list', data });
  }

  return Object.assign(simulator, { baseUrl: `${simulator.origin}/v1` });
}
