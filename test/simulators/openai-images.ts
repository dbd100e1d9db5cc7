/**
 * An OpenAI Images upstream: `POST /v1/images/generations` (JSON) and `POST /v1/images/edits`
 * (multipart/form-data, with an optional mask), answering real PNGs, with the harness's fault
 * injection. Like GPT image models it answers `b64_json` with `usage` and rejects
 * `response_format`; with `urls: true` it answers like DALL·E instead, with URLs it serves itself
 * and a `revised_prompt`.
 * @see https://platform.openai.com/docs/api-reference/images
 */
import { createHash } from 'node:crypto';
import { encode } from 'fast-png';
import { chatErrorBody } from './openai-chat.ts';
import { startSimulator, type RecordedRequest, type Reply, type Simulator } from './harness.ts';

export interface OpenAIImagesSimulatorOptions {
  apiKey?: string;
  /** Answer with image URLs (and revised prompts) instead of base64. */
  urls?: boolean;
}

export interface OpenAIImagesSimulator extends Simulator {
  readonly baseUrl: string;
  readonly options: OpenAIImagesSimulatorOptions;
  /** The multipart fields of each edit received (files as their byte length and type). */
  readonly edits: Record<string, unknown>[];
}

/** A small PNG whose colour comes from the text: the same input gives the same file. */
export function seededPng(text: string, width = 16, height = 16): Buffer {
  const [r, g, b] = createHash('sha256').update(text).digest();
  const data = new Uint8Array(width * height * 3);
  for (let index = 0; index < data.length; index += 3) data.set([r, g, b], index);
  return Buffer.from(encode({ width, height, data, channels: 3, depth: 8 }));
}

export async function startOpenAIImagesSimulator(options: OpenAIImagesSimulatorOptions = {}): Promise<OpenAIImagesSimulator> {
  const files = new Map<string, Buffer>();
  const edits: Record<string, unknown>[] = [];
  const simulator = await startSimulator({
    handle: (request, reply) => handle(request, reply),
    errorBody: chatErrorBody,
    streamErrorEvent: (message) => ({ data: chatErrorBody(500, message) }),
  });

  async function handle(request: RecordedRequest, reply: Reply): Promise<void> {
    if (request.method === 'GET' && request.path.startsWith('/files/')) {
      const file = files.get(request.path);
      return file ? reply.bytes(200, file, 'image/png') : reply.json(404, chatErrorBody(404, 'no such file'));
    }
    if (options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`) {
      return reply.json(401, chatErrorBody(401, 'Incorrect API key provided.'));
    }
    let fields: Record<string, unknown>;
    if (request.method === 'POST' && request.path === '/v1/images/generations') {
      fields = request.body ?? {};
      if ('response_format' in fields) return reply.json(400, chatErrorBody(400, "Unknown parameter: 'response_format'."));
    } else if (request.method === 'POST' && request.path === '/v1/images/edits') {
      const form = await new Request('http://simulator/', {
        method: 'POST',
        headers: { 'content-type': String(request.headers['content-type']) },
        body: request.rawBytes,
      }).formData();
      fields = {};
      for (const [name, value] of form.entries()) {
        fields[name] = typeof value === 'string' ? value : { bytes: value.size, type: value.type, name: value.name };
      }
      edits.push(fields);
      if (!fields.image) return reply.json(400, chatErrorBody(400, "Missing required parameter: 'image'."));
      fields.n = Number(fields.n ?? 1);
    } else {
      return reply.json(404, chatErrorBody(404, `Unknown path ${request.path}`));
    }
    if (typeof fields.model !== 'string' || typeof fields.prompt !== 'string') return reply.json(400, chatErrorBody(400, 'model and prompt are required'));
    const n = Number(fields.n ?? 1);
    const data = [];
    for (let index = 0; index < n; index++) {
      const png = seededPng(`${fields.model}\n${fields.prompt}\n${fields.size ?? ''}\n${index}`);
      if (options.urls) {
        const path = `/files/${createHash('sha256').update(png).digest('hex').slice(0, 16)}-${index}.png`;
        files.set(path, png);
        data.push({ url: `${simulator.origin}${path}`, revised_prompt: `A detailed picture of ${fields.prompt}` });
      } else {
        data.push({ b64_json: png.toString('base64') });
      }
    }
    const usage = options.urls
      ? undefined
      : { input_tokens: 12, input_tokens_details: { text_tokens: 10, image_tokens: 2 }, output_tokens: 272 * n, total_tokens: 12 + 272 * n };
    reply.json(200, { created: 1_700_000_000, data, ...(fields.size ? { size: fields.size } : {}), ...(usage ? { usage } : {}) });
  }

  return Object.assign(simulator, { baseUrl: `${simulator.origin}/v1`, options, edits });
}
