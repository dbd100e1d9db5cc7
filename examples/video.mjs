// A video job with plain `fetch`: submitted, polled as the gateway asks (Retry-After), and its file
// saved from the signed URL of the last poll (docs/video.md), in the system's temporary folder unless
// another is given.
//   GATEWAY_API_KEY=gateway_… ./node_modules/.bin/node examples/video.mjs [folder]
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiKey, baseUrl } from './gateway-env.mjs';

const folder = process.argv[2] ?? tmpdir();
const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };

async function api(method, path, body) {
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body: body && JSON.stringify(body) });
  const json = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${json.error?.message}`);
  return { json, retryAfter: Number(response.headers.get('retry-after') ?? 5) };
}

let { json: job, retryAfter } = await api('POST', '/v1/videos/generations', { model: 'gateway/reel-3', prompt: 'a paper boat on a pond', duration: 4 });
console.log(`(submitted ${job.id}: ${job.status}, ${job.durationSeconds} s)`);
while (job.status === 'processing') {
  await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
  ({ json: job, retryAfter } = await api('GET', `/v1/videos/generations/${job.id}`));
}
if (job.status !== 'completed') throw new Error(`the job ended ${job.status}: ${job.error?.message}`);
const [file] = job.data;
const bytes = Buffer.from(await (await fetch(file.url)).arrayBuffer());
const path = join(folder, 'boat.mp4');
await writeFile(path, bytes);
console.log(`saved ${path} (${file.duration_seconds} s, ${bytes.length} bytes)`);
